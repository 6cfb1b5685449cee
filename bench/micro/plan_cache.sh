#!/usr/bin/env bash
# What re-planning costs the hot functions (docs/architecture.md, "Plans that stay right"):
# the same calls on one connection with each function's own plan_cache_mode
# (force_generic_plan) and with PostgreSQL's default (auto: custom plans for array
# parameters, planned again on every call). Prints microseconds per call for both.
#   bash bench/micro/plan_cache.sh
# A private PostgreSQL 15 (bench/lib/postgres.sh) with the schema of sql/, 100 partitions of
# one message each, a queue-mode group; removed at the end. lock: the cursor lock of an
# acknowledgement; ack: an acknowledgement of a committed message (a no-op); pop: an autoAck
# pop, 3,000 of them draining the 100 partitions, then empty.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
source bench/lib/common.sh
source bench/lib/postgres.sh
WORK=$(mktemp -d /tmp/queen-plan-cache.XXXXXX)
trap 'pg_stop; rm -rf "$WORK"' EXIT
pg_start "$WORK"
pg_sql postgres "CREATE DATABASE q" >/dev/null
cat sql/migrations/*.sql sql/procedures/*.sql >"$WORK/schema.sql"
"$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$(pg_conninfo q)" -f "$WORK/schema.sql" >/dev/null 2>&1
psql_q() { "$PG_BIN/psql" -X -q -t -A -v ON_ERROR_STOP=1 "$(pg_conninfo q)" "$@"; }
psql_q -c "SELECT count(*) FROM generate_series(1, 100) g, LATERAL queen.push(ARRAY['mq'], ARRAY['p' || g], ARRAY[1],
             ARRAY['t' || g], ARRAY[NULL::uuid], ARRAY[NULL::text], ARRAY['{}']) x" >/dev/null
psql_q -c "SELECT count(*) FROM queen.pop('mq', 'p5', '__QUEUE_MODE__', 1, 1, false, true, NULL)" >/dev/null

# ms for a DO block of N calls
timed() {
    local body=$1 n=$2 settings=$3
    local ms
    ms=$(psql_q -c "$settings" -c "\\timing on" -c "DO \$\$ DECLARE pid bigint := (SELECT id FROM queen.log_partitions WHERE name = 'p5'); t tid[]; BEGIN
            FOR i IN 1..$n LOOP $body END LOOP; END \$\$" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
    awk -v ms="$ms" -v n="$n" 'BEGIN { printf "%.0f", ms * 1000 / n }'
}
auto="ALTER FUNCTION queen.lock_cursors(text, bigint[]) SET plan_cache_mode = auto;
      ALTER FUNCTION queen.ack(text, bigint[], text[], bigint[], uuid[], text[], text[]) SET plan_cache_mode = auto;
      ALTER FUNCTION queen.ack_completed(text, bigint[], text[], bigint[], uuid[]) SET plan_cache_mode = auto;
      ALTER FUNCTION queen.pop(text, text, text, integer, integer, boolean, boolean, timestamptz) SET plan_cache_mode = auto;"
lock="t := queen.lock_cursors('__QUEUE_MODE__', ARRAY[pid]);"
ack="PERFORM queen.ack('__QUEUE_MODE__', ARRAY[pid], ARRAY['t5'], ARRAY[NULL]::bigint[], ARRAY[NULL]::uuid[], ARRAY['completed'], ARRAY[NULL]::text[]);"
# each mode drains the queue with a group of its own, so both do the same work
pop="PERFORM count(*) FROM queen.pop('mq', NULL, 'drain-MODE', 1, 1, true, true, NULL);"
declare -A generic
for name in lock ack pop; do generic[$name]=$(timed "${!name//MODE/generic}" 3000 "SELECT 1"); done
psql_q -c "$auto" >/dev/null
echo "call    force_generic_plan µs/call   auto µs/call"
for name in lock ack pop; do
    printf "%-7s %25s %14s\n" "$name" "${generic[$name]}" "$(timed "${!name//MODE/auto}" 3000 "SELECT 1")"
done
