#!/usr/bin/env bash
# Streams (docs/streams.md; results in docs/benchmarks.md, "Streams"): queen_bench's stream
# workload (--mode stream: producers push {"key","ts"} events, workers pop as the group
# streams.<query>, read the batch's keys with state/get and send one POST /streams/v1/cycle per
# source-partition batch: a tumbling count per (key, 1 s window), closed windows pushed to the
# sink, state upserted or deleted, the batch's last message acked; bench/stream_stage.hpp) on
# one private PostgreSQL 15 and one broker, set up as bench/compare.sh sets them up. Prints
# messages/s and cycles/s, and the CPU of PostgreSQL, of the broker and of queen_bench per
# committed message (the readings of compare.sh: bench/lib/common.sh).
#
#   bench/stream.sh [BUILD_DIR]                       (make bench-stream)
#
# Environment (defaults in brackets): MESSAGES [200000] messages over PARTITIONS [1000]
# partitions; KEYS [4] keys per partition; BENCH_ARGS [] more queen_bench options (e.g.
# "--connections 8"); EXTENSION [off] (on: CREATE EXTENSION queen_ext in the broker's
# database); PROFILE_ROWS [15] statements of the pg_stat_statements profile printed; KEEP [0]
# keeps the work directory (logs, the JSON line, the profile).
# The CPU readings span the whole queen_bench process: its registration and the two reads of
# every lane's state (before and after, 2 x PARTITIONS state/get calls) are in them.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR=$(cd "${1:-build}" && pwd)
# shellcheck source=bench/lib/common.sh
source "$ROOT/bench/lib/common.sh"
# shellcheck source=bench/lib/postgres.sh
source "$ROOT/bench/lib/postgres.sh"

N=${MESSAGES:-200000}
PARTITIONS=${PARTITIONS:-1000}
KEYS=${KEYS:-4}
BENCH_ARGS=${BENCH_ARGS:-}
EXTENSION=${EXTENSION:-off}
KEEP=${KEEP:-0}
QUEEN="$BUILD_DIR/queen"
QUEEN_BENCH="$BUILD_DIR/queen_bench"

die() { echo "stream.sh: $*" >&2; exit 1; }
[[ -x $QUEEN && -x $QUEEN_BENCH ]] || die "build queen and queen_bench in $BUILD_DIR first"
command -v jq >/dev/null || die "jq is needed (apt-get install jq)"

WORK=$(mktemp -d /tmp/queen-stream.XXXXXX)
chmod 755 "$WORK"
RESULTS=$WORK/results.jsonl
: >"$RESULTS"
BROKER_PID=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    [[ -n $BROKER_PID ]] && { kill -TERM "$BROKER_PID" 2>/dev/null || true; wait "$BROKER_PID" 2>/dev/null || true; }
    pg_stop
    if [[ $KEEP == 1 || $rc != 0 ]]; then echo "stream.sh: work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== machine: $(nproc) cpus, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
pg_start "$WORK/pg"
PM=$(pg_postmaster_pid)
echo "== PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT (fsync=on, synchronous_commit=on, shared_buffers=512MB)"
pg_sql postgres "CREATE DATABASE queen" >/dev/null
pg_sql queen "CREATE EXTENSION pg_stat_statements" >/dev/null
[[ $EXTENSION == on ]] && pg_sql queen "CREATE EXTENSION queen_ext" >/dev/null

BROKER_PORT=$(free_port)
URL="http://127.0.0.1:$BROKER_PORT"
QUEEN_DATABASE_URL=$(pg_conninfo queen) HOST=127.0.0.1 PORT=$BROKER_PORT QUEEN_SPOOL_DIR="$WORK/spool" \
    "$QUEEN" >"$WORK/broker.log" 2>&1 &
BROKER_PID=$!
for i in $(seq 1 120); do
    curl -sf "$URL/health" >/dev/null 2>&1 && break
    kill -0 "$BROKER_PID" 2>/dev/null || die "the broker exited during start-up: $(tail -5 "$WORK/broker.log")"
    [[ $i == 120 ]] && die "the broker did not become healthy"
    sleep 0.5
done
echo "== broker: $(curl -s "$URL/health" | jq -c '{version, codecPath, codec}')"
pg_sql queen "SELECT pg_stat_statements_reset()" >/dev/null

# ---- the run, with the CPU of PostgreSQL (postmaster and backends) and of the broker around it.
# Backends that exited are counted once the postmaster has reaped them: settle 1 s either side.
sleep 1
p0=$(postgres_ticks "$PM"); b0=$(proc_ticks "$BROKER_PID"); m0=$(machine_ticks)
echo "== queen_bench --mode stream --partitions $PARTITIONS --messages $N --stream-keys $KEYS $BENCH_ARGS"
rc=0
# shellcheck disable=SC2086
"$QUEEN_BENCH" --url "$URL" --mode stream --partitions "$PARTITIONS" --messages "$N" --stream-keys "$KEYS" \
    --max-seconds 1200 --quiet --label stream --json-out "$RESULTS" $BENCH_ARGS >"$WORK/output.txt" 2>"$WORK/errors.txt" || rc=$?
sleep 1
p1=$(postgres_ticks "$PM"); b1=$(proc_ticks "$BROKER_PID"); m1=$(machine_ticks)
cat "$WORK/output.txt"
[[ -s $WORK/errors.txt ]] && { echo "-- queen_bench's error lines (first 20):"; head -n 20 "$WORK/errors.txt"; }
[[ -s $RESULTS ]] || die "queen_bench wrote no result (exit $rc)"

secs() { awk -v a="$1" -v b="$2" -v t="$CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / t }'; }
line=$(tail -n 1 "$RESULTS" | jq -c --argjson rc "$rc" --argjson pg "$(secs "$p0" "$p1")" --argjson br "$(secs "$b0" "$b1")" \
    --argjson busy "$(secs "${m0% *}" "${m1% *}")" \
    '. + {system: "queen", scenario: "stream", exitStatus: $rc, cpuSeconds: {postgres: $pg, broker: $br, machineBusy: $busy}}')
echo "$line" >"$RESULTS"

echo
echo "== stream: $N messages over $PARTITIONS partitions, $KEYS keys each; one PostgreSQL 15 (fsync on, synchronous_commit on)"
jq -r '
  def us($s): if .stream.messagesCommitted > 0 then ($s * 1000000 / .stream.messagesCommitted | floor | tostring) else "-" end;
  "messages committed/s \(.throughput.consume | floor), cycles/s \(.throughput.cycles | floor) (\(.throughput.messagesPerCycle * 100 | round / 100) messages per cycle), end to end \(.throughput.endToEnd | floor) msgs/s, push \(.throughput.push | floor) msgs/s",
  "CPU µs per committed message: PostgreSQL \(us(.cpuSeconds.postgres)), broker \(us(.cpuSeconds.broker)), queen_bench \(us(.clientCpuSeconds)) (machine busy \(.cpuSeconds.machineBusy) CPU-s over \(.elapsedSeconds | floor) s)",
  "latency p50/p99 ms: pop \(.latencyMs.pop.p50)/\(.latencyMs.pop.p99), state/get \(.latencyMs.stateGet.p50)/\(.latencyMs.stateGet.p99), cycle \(.latencyMs.cycle.p50)/\(.latencyMs.cycle.p99), message pushed -> committed \(.latencyMs.endToEnd.p50)/\(.latencyMs.endToEnd.p99)",
  "checks: committed twice \(.verification.committedTwice), not committed \(.verification.notCommitted), order violations \(.verification.orderViolations), failed cycles \(.stream.failedCycles), counts \(if .stream.countCheck.balanced then "balanced" else "NOT balanced" end) (counted \(.stream.countCheck.counted) = emitted \(.stream.countCheck.emitted) + state \(.stream.countCheck.stateAfter) - \(.stream.countCheck.stateBefore)), source lag at the end \(.stream.sourceLagAtEnd); result \(.result)"
' "$RESULTS"
# The broker's backends report their table counts when they exit: stop the broker first.
kill -TERM "$BROKER_PID" 2>/dev/null || true
wait "$BROKER_PID" 2>/dev/null || true
BROKER_PID=""
sleep 1
echo
echo "== the hot tables at the end (pg_stat_user_tables; sizes with indexes and TOAST)"
"$PG_BIN/psql" -X -q "$(pg_conninfo queen)" -c "SELECT relname, n_live_tup, n_dead_tup, n_tup_ins, n_tup_del, autovacuum_count,
        pg_size_pretty(pg_total_relation_size(relid)) AS total
   FROM pg_stat_user_tables WHERE schemaname = 'queen'
    AND relname IN ('stream_state', 'stream_lanes', 'stream_queries', 'log_consumers', 'log_segments', 'log_dedup', 'log_partitions')
  ORDER BY relname"
echo "== where PostgreSQL spent its time (pg_stat_statements, the run and the reads around it; nested statements too)"
"$PG_BIN/psql" -X -q "$(pg_conninfo queen)" -c "SELECT calls, round(total_exec_time::numeric) AS total_ms,
        round(mean_exec_time::numeric, 3) AS mean_ms, rows, toplevel AS top, left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS query
   FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'queen')
  ORDER BY total_exec_time DESC LIMIT ${PROFILE_ROWS:-15}" | tee "$WORK/pg_stat_statements.txt"
echo "JSON line: $RESULTS (KEEP=1 keeps it)"
cp "$RESULTS" "${BENCH_RESULTS_OUT:-/dev/null}" 2>/dev/null || true
((rc == 0)) || die "queen_bench exited $rc (see above)"
