#!/usr/bin/env bash
# Runs the queen load generator against a private broker.
#
#   bench/run.sh [BUILD_DIR]            (default BUILD_DIR: build)
#
# Starts BUILD_DIR/queen with an embedded PostgreSQL in a fresh temporary data directory on
# a free port, waits for /health, runs BUILD_DIR/queen_bench in each scenario RUNS times,
# prints every result and a summary of medians, then stops the broker with SIGTERM and
# removes the temporary directory -- also when something fails or the script is interrupted.
#
# Environment (defaults in brackets):
#   RUNS [3]               repetitions of every scenario
#   MESSAGES [100000]      messages per scenario
#   PARTITIONS [100]  CONNECTIONS [16]  PUSH_BATCH [100]  POP_BATCH [100]  PAYLOAD_BYTES [200]
#   SCENARIOS ["push consume both"]  any of:
#       push          produce only, into a fresh queue (leaves a backlog)
#       consume       pop + explicit ack of the backlog the push scenario of the same run left
#       both          produce and consume concurrently, explicit acks (the headline)
#       both-wait     as both, with long-poll pops (wait=true)
#       both-autoack  as both, with autoAck pops (no ack requests)
#   MAX_SECONDS [600]      time limit per queen_bench run
#   BENCH_ARGS []          extra queen_bench options for every run
#   RESULTS [a temp file]  where the JSON results (one line per run) are collected
#   KEEP [0]               1 keeps the temporary directory (broker and PostgreSQL logs)
#   LABEL_TAG []           appended to each scenario's label ("both P=100000 #1"), so that runs
#                          of other conditions collected in one RESULTS file stay apart
#   EXTENSION [off]        on: CREATE EXTENSION queen_ext in the embedded database before the
#                          runs (the accelerated codec path; install it first with
#                          make ext-install); off: the stock SQL path
# Each run's JSON line also gets the segment bytes stored and the WAL written per message
# (storage: segmentBytesPerMessage of the whole table after the run, walBytesPerMessage of
# the run) when psql is available.
# Exit status: 0 when every run passed its checks, 1 otherwise.
set -euo pipefail

BUILD_DIR=${1:-build}
RUNS=${RUNS:-3}
MESSAGES=${MESSAGES:-100000}
PARTITIONS=${PARTITIONS:-100}
CONNECTIONS=${CONNECTIONS:-16}
PUSH_BATCH=${PUSH_BATCH:-100}
POP_BATCH=${POP_BATCH:-100}
PAYLOAD_BYTES=${PAYLOAD_BYTES:-200}
SCENARIOS=${SCENARIOS:-"push consume both"}
MAX_SECONDS=${MAX_SECONDS:-600}
BENCH_ARGS=${BENCH_ARGS:-}
KEEP=${KEEP:-0}
EXTENSION=${EXTENSION:-off}
[[ $EXTENSION == on || $EXTENSION == off ]] || { echo "run.sh: EXTENSION must be on or off" >&2; exit 1; }

die() { echo "run.sh: $*" >&2; exit 1; }
# shellcheck source=bench/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

BUILD_DIR=$(cd "$BUILD_DIR" 2>/dev/null && pwd) || die "no build directory '${1:-build}'"
QUEEN="$BUILD_DIR/queen"
BENCH="$BUILD_DIR/queen_bench"
[[ -x $QUEEN ]] || die "$QUEEN not found; build it: cmake --build $BUILD_DIR --target queen"
[[ -x $BENCH ]] || die "$BENCH not found; build it: cmake --build $BUILD_DIR --target queen_bench"
command -v curl >/dev/null || die "curl is needed to wait for /health"

WORK=$(mktemp -d /tmp/queen-bench.XXXXXX)
chmod 755 "$WORK"  # as root the embedded PostgreSQL runs as `postgres` and must reach the data dir
RESULTS=${RESULTS:-$WORK/results.jsonl}
: >"$RESULTS"
BROKER_PID=""
BENCH_PID=""

stop_broker() {
    [[ -n $BROKER_PID ]] || return 0
    if kill -0 "$BROKER_PID" 2>/dev/null; then
        echo "run.sh: stopping the broker (SIGTERM to pid $BROKER_PID)" >&2
        kill -TERM "$BROKER_PID" 2>/dev/null || true
        for _ in $(seq 1 300); do
            kill -0 "$BROKER_PID" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$BROKER_PID" 2>/dev/null; then
            echo "run.sh: the broker did not stop within 30 s; SIGKILL" >&2
            kill -KILL "$BROKER_PID" 2>/dev/null || true
        fi
    fi
    wait "$BROKER_PID" 2>/dev/null || true
    BROKER_PID=""
    # A broker that was killed leaves its embedded PostgreSQL running: stop it too.
    if [[ -f $WORK/data/postmaster.pid ]]; then
        local pg_ctl
        pg_ctl=$(command -v pg_ctl || ls /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | tail -1 || true)
        if [[ -n $pg_ctl ]]; then
            if [[ $(id -u) == 0 ]]; then
                su postgres -s /bin/sh -c "'$pg_ctl' -D '$WORK/data' stop -m immediate" >/dev/null 2>&1 || true
            else
                "$pg_ctl" -D "$WORK/data" stop -m immediate >/dev/null 2>&1 || true
            fi
        fi
    fi
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [[ -n $BENCH_PID ]]; then
        kill -TERM "$BENCH_PID" 2>/dev/null || true
        wait "$BENCH_PID" 2>/dev/null || true
    fi
    stop_broker
    if [[ $rc != 0 && -f $WORK/broker.log ]]; then
        echo "run.sh: exit status $rc; last broker log lines:" >&2
        tail -n 30 "$WORK/broker.log" >&2 || true
    fi
    if [[ $KEEP == 1 ]]; then
        echo "run.sh: kept $WORK" >&2
    else
        rm -rf "$WORK"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# CPU time (clock ticks) of the broker, of its PostgreSQL (postmaster, live backends, and
# the exited ones the postmaster reaped) and of the whole machine: figures on a shared
# machine only mean something next to how much CPU the stack under test really got.
cpu_snapshot() {  # prints: broker_ticks postgres_ticks machine_busy_ticks machine_total_ticks
    local broker pg=0 pm p
    broker=$(proc_ticks "$BROKER_PID")
    pm=$(head -n 1 "$WORK/data/postmaster.pid" 2>/dev/null || true)
    [[ -n $pm ]] && pg=$(postgres_ticks "$pm")
    read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
    echo "$broker $pg $((user + nice + system + irq + softirq + steal)) $((user + nice + system + idle + iowait + irq + softirq + steal))"
}

echo "== machine"
echo "cpus: $(nproc)  memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)  cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
echo "== starting broker: HOST=127.0.0.1 PORT=$PORT QUEEN_DATA_DIR=$WORK/data $QUEEN"
HOST=127.0.0.1 PORT=$PORT QUEEN_DATA_DIR="$WORK/data" "$QUEEN" >"$WORK/broker.log" 2>&1 &
BROKER_PID=$!
for i in $(seq 1 240); do
    if curl -sf "$URL/health" >/dev/null 2>&1; then break; fi
    kill -0 "$BROKER_PID" 2>/dev/null || die "the broker exited during start-up (see the log above)"
    [[ $i == 240 ]] && die "the broker did not become healthy within 120 s"
    sleep 0.5
done
# The embedded database, through the psql line the broker printed.
PSQL_CONNINFO=$(sed -n 's/.*inspect it with: [^"]*"\([^"]*\)".*/\1/p' "$WORK/broker.log" | head -n 1)
PSQL=$(command -v psql || ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | tail -1 || true)
sql() { "$PSQL" -X -q -t -A -v ON_ERROR_STOP=1 "$PSQL_CONNINFO" -c "$1"; }
if [[ $EXTENSION == on ]]; then
    [[ -n $PSQL && -n $PSQL_CONNINFO ]] || die "EXTENSION=on needs psql and the broker's psql line"
    sql "CREATE EXTENSION IF NOT EXISTS queen_ext" || die "CREATE EXTENSION queen_ext failed (make ext-install first)"
fi
echo "broker healthy: $(curl -s "$URL/health")"

failed=0
run_bench() {  # label, then queen_bench options
    local label=$1
    shift
    echo
    echo "== $label: queen_bench --url $URL $* $BENCH_ARGS"
    local before lines_before
    before=$(cpu_snapshot)
    lines_before=$(wc -l <"$RESULTS")
    local wal_before=""
    [[ -n $PSQL && -n $PSQL_CONNINFO ]] && wal_before=$(sql "SELECT pg_current_wal_lsn()" 2>/dev/null || true)
    # In the background, so that a signal to this script is handled at once.
    # shellcheck disable=SC2086
    "$BENCH" --url "$URL" --quiet --max-seconds "$MAX_SECONDS" --label "$label" --json-out "$RESULTS" "$@" $BENCH_ARGS &
    BENCH_PID=$!
    local rc=0
    wait "$BENCH_PID" || rc=$?
    BENCH_PID=""
    local -a b0 b1
    read -r -a b0 <<<"$before"
    read -r -a b1 <<<"$(cpu_snapshot)"
    local cpu
    cpu=$(awk -v t="$CLK_TCK" -v b="$((b1[0] - b0[0]))" -v p="$((b1[1] - b0[1]))" -v busy="$((b1[2] - b0[2]))" \
              -v total="$((b1[3] - b0[3]))" \
              'BEGIN { printf "%.2f %.2f %.2f %.2f", b / t, p / t, busy / t, total / t }')
    read -r cpu_broker cpu_pg cpu_busy cpu_total <<<"$cpu"
    echo "cpu during '$label': broker ${cpu_broker} s, its PostgreSQL ${cpu_pg} s; whole machine busy ${cpu_busy} of ${cpu_total} cpu-seconds ($(nproc) cpus; includes the client and any other work on the machine)"
    if command -v jq >/dev/null && [[ $(wc -l <"$RESULTS") -gt $lines_before ]]; then
        local last
        local storage='null'
        if [[ -n $wal_before ]]; then
            storage=$(sql "SELECT json_build_object(
                  'segmentBytes', pg_total_relation_size('queen.log_segments'),
                  'storedMessages', (SELECT coalesce(sum(last_offset - first_offset + 1), 0) FROM queen.log_segments),
                  'segmentBytesPerMessage', round(pg_total_relation_size('queen.log_segments')::numeric
                      / nullif((SELECT sum(last_offset - first_offset + 1) FROM queen.log_segments), 0), 1),
                  'zstdSegments', (SELECT count(*) FROM queen.log_segments WHERE codec = 1),
                  'walBytes', pg_current_wal_lsn() - '$wal_before'::pg_lsn)" 2>/dev/null || echo null)
        fi
        last=$(tail -n 1 "$RESULTS" | jq -c --argjson b "$cpu_broker" --argjson p "$cpu_pg" --argjson u "$cpu_busy" \
               --argjson t "$cpu_total" --argjson st "$storage" --arg ext "$EXTENSION" --argjson n "$MESSAGES" \
               '. + {extension: $ext, serverCpuSeconds: {broker: $b, postgres: $p}, machineCpuSeconds: {busy: $u, total: $t},
                     storage: $st}
                  | if .storage != null then .storage.walBytesPerMessage = ((.storage.walBytes / $n) | floor) else . end')
        sed -i '$d' "$RESULTS"
        echo "$last" >>"$RESULTS"
    fi
    if [[ $rc != 0 ]]; then
        echo "run.sh: $label FAILED (queen_bench exit status $rc; KEEP=1 keeps the broker's data directory)" >&2
        failed=1
    fi
    kill -0 "$BROKER_PID" 2>/dev/null || die "the broker died during '$label'"
}

common=(--messages "$MESSAGES" --partitions "$PARTITIONS" --connections "$CONNECTIONS" --push-batch "$PUSH_BATCH"
        --pop-batch "$POP_BATCH" --payload-bytes "$PAYLOAD_BYTES")
stamp=$(date +%s)
for run in $(seq 1 "$RUNS"); do
    for scenario in $SCENARIOS; do
        case $scenario in
            push) run_bench "push${LABEL_TAG:-} #$run" --mode push --queue "backlog-$stamp-$run" "${common[@]}" ;;
            consume) run_bench "consume${LABEL_TAG:-} #$run" --mode consume --queue "backlog-$stamp-$run" "${common[@]}" ;;
            both) run_bench "both${LABEL_TAG:-} #$run" --mode both "${common[@]}" ;;
            both-wait) run_bench "both-wait${LABEL_TAG:-} #$run" --mode both --wait "${common[@]}" ;;
            both-autoack) run_bench "both-autoack${LABEL_TAG:-} #$run" --mode both --auto-ack "${common[@]}" ;;
            *) die "unknown scenario '$scenario'" ;;
        esac
    done
done

echo
echo "== summary: medians over $RUNS run(s) per scenario (msgs/s; latencies in ms as p50/p99;"
echo "   cpu seconds of broker / its PostgreSQL / client / whole machine busy during the run)"
if command -v jq >/dev/null; then
    jq -rs '
      def median: map(select(. != null)) | sort | if length == 0 then null
        elif length % 2 == 1 then .[(length - 1) / 2] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
      def f0: if . == null then "-" else (. | round | tostring) end;
      def f1: if . == null then "-" else ((. * 10 | round) / 10 | tostring) end;
      def lat($k): (map(.latencyMs[$k].p50) | median | f1) + "/" + (map(.latencyMs[$k].p99) | median | f1);
      group_by(.label | sub(" #[0-9]+$"; "")) | sort_by(.[0].label) |
      (["scenario", "runs", "push/s", "consume/s", "e2e/s", "push ms", "pop ms", "ack ms", "e2e msg ms",
        "cpu s broker/pg/client/busy", "dup", "missing", "order", "result"] | @tsv),
      (.[] | [(.[0].label | sub(" #[0-9]+$"; "")), (length | tostring),
              (map(.throughput.push) | median | f0), (map(.throughput.consume) | median | f0),
              (map(.throughput.endToEnd) | median | f0),
              lat("push"), lat("pop"), lat("ack"), lat("endToEnd"),
              ([(map(.serverCpuSeconds.broker) | median | f1), (map(.serverCpuSeconds.postgres) | median | f1),
                (map(.clientCpuSeconds) | median | f1), (map(.machineCpuSeconds.busy) | median | f1)] | join("/")),
              (map(.verification.duplicates // 0) | add | tostring),
              (map(.verification.missing // .push.notAccepted // 0) | add | tostring),
              (map(.verification.orderViolations // .push.offsetRegressions // 0) | add | tostring),
              (map(.result) | unique | join(","))] | @tsv)
    ' "$RESULTS" | column -t -s $'\t'
    echo "conditions of the last run: $(tail -n 1 "$RESULTS" | jq -r .conditionLine)"
else
    echo "(jq not found: see the per-run tables above; JSON results in $RESULTS)"
fi
[[ $failed == 0 ]] || die "at least one run failed its checks"
echo "all runs passed their checks"
