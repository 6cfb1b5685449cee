#!/usr/bin/env bash
# What counting stored bytes costs the stats refresh (QUEEN_TENANT_MAX_BYTES, docs/tenancy.md):
# a private PostgreSQL 15 (bench/lib/postgres.sh) with the schema a broker installs, QUEUES
# queues of PARTITIONS partitions holding SEGMENTS segments each, then ROUNDS pairs of
# `CALL queen.refresh_stats(p_count_bytes => …)`, alternating a refresh that sums
# pg_column_size of every segment with one that counts no bytes; prints each side's median
# duration and their ratio, and removes everything.
#   bash bench/stats_bytes_ab.sh [BUILD_DIR]     (default build)
# Environment: QUEUES [1000], PARTITIONS [100], SEGMENTS [3], ROUNDS [6].
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
QUEUES=${QUEUES:-1000}
PARTITIONS=${PARTITIONS:-100}
SEGMENTS=${SEGMENTS:-3}
ROUNDS=${ROUNDS:-6}
cd "$ROOT"
source bench/lib/common.sh
source bench/lib/postgres.sh
WORK=$(mktemp -d /tmp/queen-stats-bytes.XXXXXX)
BROKER_PID=
cleanup() {
    [[ -n $BROKER_PID ]] && kill "$BROKER_PID" 2>/dev/null && wait "$BROKER_PID" 2>/dev/null
    pg_stop
    rm -rf "$WORK"
}
trap cleanup EXIT
pg_start "$WORK"
pg_sql postgres "CREATE DATABASE q" >/dev/null
# The broker installs the schema and is stopped: the refreshes below are the only work.
PORT=$(free_port)
HOST=127.0.0.1 PORT=$PORT QUEEN_DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_PORT/q" \
    QUEEN_STATS_INTERVAL_MS=86400000 "$BUILD/queen" >"$WORK/broker.log" 2>&1 &
BROKER_PID=$!
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.5; done
kill "$BROKER_PID" && wait "$BROKER_PID" 2>/dev/null || true
BROKER_PID=

echo "== filling: $QUEUES queues x $PARTITIONS partitions x $SEGMENTS segments"
pg_sql q "DO \$\$
DECLARE n integer := $PARTITIONS;
BEGIN
    FOR q IN 1..$QUEUES LOOP
        FOR s IN 1..$SEGMENTS LOOP
            PERFORM count(*) FROM queen.push(
                array_fill('sb-' || q, ARRAY[n]), ARRAY(SELECT 'p' || i FROM generate_series(1, n) i),
                array_fill(1, ARRAY[n]), ARRAY(SELECT 'sb-' || q || '-' || s || '-' || i FROM generate_series(1, n) i),
                array_fill(NULL::uuid, ARRAY[n]), array_fill(NULL::text, ARRAY[n]),
                ARRAY(SELECT '{\"i\":' || i || ',\"pad\":\"' || repeat('x', 200) || '\"}' FROM generate_series(1, n) i));
        END LOOP;
    END LOOP;
END \$\$" >/dev/null
pg_sql q "ANALYZE" >/dev/null
echo "$(pg_sql q "SELECT count(*) FROM queen.log_partitions") partitions, $(pg_sql q "SELECT count(*) FROM queen.log_segments") segments"

refresh_ms() { pg_sql q "CALL queen.refresh_stats(p_count_bytes => $1)" | cut -d'|' -f6; }

refresh_ms true >/dev/null  # warm the caches
with=() without=()
for r in $(seq 1 "$ROUNDS"); do
    # Both orders, so that a drift in the machine's load falls on both sides.
    if ((r % 2)); then
        with+=("$(refresh_ms true)")
        without+=("$(refresh_ms false)")
    else
        without+=("$(refresh_ms false)")
        with+=("$(refresh_ms true)")
    fi
done
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
m_with=$(printf '%s\n' "${with[@]}" | median)
m_without=$(printf '%s\n' "${without[@]}" | median)
echo "refresh with bytes (ms):    ${with[*]}  median $m_with"
echo "refresh without bytes (ms): ${without[*]}  median $m_without"
echo "ratio with/without: $(awk -v a="$m_with" -v b="$m_without" 'BEGIN { printf "%.3f", a / b }')"
