#!/usr/bin/env bash
# Soak: the broker at a steady moderate rate for a long time, its resident memory sampled.
#
#   bench/soak.sh [BUILD_DIR]                     (make soak)
#
# Starts a private PostgreSQL 15 (fsync on) and the broker, runs queen_bench in `both` mode
# (explicit acks, dedup on) with fixed-rate producers for SOAK_SECONDS, samples the broker's
# RSS every SAMPLE_SECONDS, and reports start, peak and end RSS, the drift of the last half
# against the first half, and the run's verification (0 failed requests, 0 duplicates /
# missing / order violations required). Exit status 0 only when the run verified.
#
# Environment: SOAK_SECONDS [600]; RATE [2000] messages/s; SAMPLE_SECONDS [5];
# PARTITIONS [100]; CONNECTIONS [16]; KEEP [0] keeps the work directory.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR=$(cd "${1:-build}" && pwd)
source "$ROOT/bench/lib/common.sh"
source "$ROOT/bench/lib/postgres.sh"

SOAK_SECONDS=${SOAK_SECONDS:-600}
RATE=${RATE:-2000}
SAMPLE_SECONDS=${SAMPLE_SECONDS:-5}
PARTITIONS=${PARTITIONS:-100}
CONNECTIONS=${CONNECTIONS:-16}
KEEP=${KEEP:-0}
command -v jq >/dev/null || { echo "soak.sh: jq is needed" >&2; exit 1; }

WORK=$(mktemp -d /tmp/queen-soak.XXXXXX)
chmod 755 "$WORK"
BROKER_PID=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    [[ -n $BROKER_PID ]] && { kill -TERM "$BROKER_PID" 2>/dev/null || true; wait "$BROKER_PID" 2>/dev/null || true; }
    pg_stop
    if [[ $KEEP == 1 || $rc != 0 ]]; then echo "soak.sh: work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pg_start "$WORK/pg"
pg_sql postgres "CREATE DATABASE queen" >/dev/null
PORT=$(free_port)
QUEEN_DATABASE_URL=$(pg_conninfo queen) HOST=127.0.0.1 PORT=$PORT QUEEN_SPOOL_DIR="$WORK/spool" \
    "$BUILD_DIR/queen" >"$WORK/broker.log" 2>&1 &
BROKER_PID=$!
for i in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    kill -0 "$BROKER_PID" 2>/dev/null || { echo "soak.sh: the broker exited" >&2; exit 1; }
    sleep 0.5
done

MESSAGES=$((RATE * SOAK_SECONDS))
echo "== soak: $SOAK_SECONDS s at $RATE msgs/s ($MESSAGES messages), $PARTITIONS partitions, $CONNECTIONS connections"
: >"$WORK/rss.tsv"
(
    t0=$(date +%s)
    while kill -0 "$BROKER_PID" 2>/dev/null; do
        echo -e "$(($(date +%s) - t0))\t$(rss_kib "$BROKER_PID")" >>"$WORK/rss.tsv"
        sleep "$SAMPLE_SECONDS"
    done
) &
SAMPLER=$!
rc=0
"$BUILD_DIR/queen_bench" --url "http://127.0.0.1:$PORT" --mode both --rate "$RATE" --messages "$MESSAGES" \
    --partitions "$PARTITIONS" --connections "$CONNECTIONS" --max-seconds $((SOAK_SECONDS * 3)) --quiet \
    --label soak --json-out "$WORK/soak.jsonl" >"$WORK/bench.txt" 2>&1 || rc=$?
sleep "$SAMPLE_SECONDS"
kill "$SAMPLER" 2>/dev/null || true
wait "$SAMPLER" 2>/dev/null || true

awk -F'\t' '
  { t[NR] = $1; r[NR] = $2; if ($2 > peak) { peak = $2; at = $1 } }
  END {
    n = NR; h = int(n / 2);
    for (i = 1; i <= h; i++) first += r[i];
    for (i = h + 1; i <= n; i++) last += r[i];
    printf "broker RSS: start %d KiB, peak %d KiB (at %d s), end %d KiB; mean of the first half %d KiB, of the second half %d KiB (%+.1f %%); %d samples\n",
      r[1], peak, at, r[n], first / h, last / (n - h), 100 * (last / (n - h) - first / h) / (first / h), n
  }' "$WORK/rss.tsv"
jq -r '"throughput: push \(.throughput.push | floor)/s, consume \(.throughput.consume | floor)/s; latency p50/p99 \(.latencyMs.endToEnd.p50)/\(.latencyMs.endToEnd.p99) ms; failed requests: push \(.push.failedRequests // 0), consume \(.consume.failedRequests // 0); duplicates \(.verification.duplicates), missing \(.verification.missing), order violations \(.verification.orderViolations); result \(.result)"' \
    "$WORK/soak.jsonl" 2>/dev/null || cat "$WORK/bench.txt"
cp "$WORK/rss.tsv" "${SOAK_RSS_OUT:-/dev/null}" 2>/dev/null || true
exit "$rc"
