#!/usr/bin/env bash
# The headline load (produce and consume at once, explicit acks) on one PostgreSQL directly
# and through a PL/Proxy shard proxy over 1, 2 and 4 shards (docs/scaling.md), each shard its
# own PostgreSQL cluster on this machine, configurations taking turns round by round.
#
#   bench/shards.sh [BUILD_DIR]            (default BUILD_DIR: build; make bench-shards)
#
# Every cluster runs as `postgres` in a fresh temporary directory on a free port, with the
# same settings, and queen_ext where PostgreSQL has it (init installs it on every shard; the
# direct database gets it too); the proxy database lives in the first cluster. For each configuration and
# round: fresh databases, `queen shards init` (not for direct), a broker on the database or
# the proxy, one queen_bench run; then a table of medians. On two cores the shards share the
# CPU with the broker, the proxy and the client: the figures say what the proxy costs, not
# what separate machines would give.
#
# Environment (defaults in brackets):
#   ROUNDS [3]  MESSAGES [50000]  PARTITIONS [100]  CONNECTIONS [16]  PUSH_BATCH [100]
#   POP_BATCH [100]  PAYLOAD_BYTES [200]  CONFIGS ["direct proxy-1 proxy-2 proxy-4"]
#   MAX_SECONDS [600] per run;  KEEP [0] 1 keeps the temporary directory
# Exit status: 0 when every run passed its checks, 1 otherwise.
set -euo pipefail

BUILD_DIR=${1:-build}
ROUNDS=${ROUNDS:-3}
MESSAGES=${MESSAGES:-50000}
PARTITIONS=${PARTITIONS:-100}
CONNECTIONS=${CONNECTIONS:-16}
PUSH_BATCH=${PUSH_BATCH:-100}
POP_BATCH=${POP_BATCH:-100}
PAYLOAD_BYTES=${PAYLOAD_BYTES:-200}
CONFIGS=${CONFIGS:-"direct proxy-1 proxy-2 proxy-4"}
MAX_SECONDS=${MAX_SECONDS:-600}
KEEP=${KEEP:-0}

die() { echo "shards.sh: $*" >&2; exit 1; }
# shellcheck source=bench/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

BUILD_DIR=$(cd "$BUILD_DIR" 2>/dev/null && pwd) || die "no build directory '${1:-build}'"
QUEEN="$BUILD_DIR/queen"
BENCH="$BUILD_DIR/queen_bench"
[[ -x $QUEEN && -x $BENCH ]] || die "build queen and queen_bench first (make build)"
command -v jq >/dev/null || die "jq is needed"
PGBIN=$(pg_config --bindir)
[[ -f $(pg_config --sharedir)/extension/plproxy.control ]] || die "PL/Proxy is missing (scripts/install-deps.sh run)"

WORK=$(mktemp -d /tmp/queen-shards-bench.XXXXXX)
chmod 755 "$WORK"
RESULTS=$WORK/results.jsonl
: >"$RESULTS"
BROKER_PID=""
PORTS=()

as_postgres() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

stop_broker() {
    [[ -n $BROKER_PID ]] || return 0
    kill -TERM "$BROKER_PID" 2>/dev/null || true
    wait "$BROKER_PID" 2>/dev/null || true
    BROKER_PID=""
}

cleanup() {
    local rc=$? i
    trap - EXIT INT TERM
    stop_broker
    for i in "${!PORTS[@]}"; do
        as_postgres "$PGBIN/pg_ctl" -D "$WORK/pg$i" stop -m fast >/dev/null 2>&1 || true
    done
    if [[ $KEEP == 1 ]]; then echo "shards.sh: kept $WORK" >&2; else rm -rf "$WORK"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Four clusters, the same settings each.
for i in 0 1 2 3; do
    mkdir -p "$WORK/pg$i" && chown postgres "$WORK/pg$i" 2>/dev/null || true
    as_postgres "$PGBIN/initdb" -D "$WORK/pg$i" -U postgres -A trust >/dev/null
    port=$(free_port)
    PORTS+=("$port")
    as_postgres "$PGBIN/pg_ctl" -D "$WORK/pg$i" -l "$WORK/pg$i/log" -w \
        -o "-p $port -k $WORK/pg$i -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=256MB" \
        start >/dev/null
done
conn() { echo "host=127.0.0.1 port=${PORTS[$1]} user=postgres dbname=$2"; }
psql_on() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$(conn "$1" postgres)" -c "$2"; }

echo "== machine"
echo "cpus: $(nproc)  memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "clusters on ports ${PORTS[*]} (max_connections 300, shared_buffers 256MB)"

failed=0
# run_config CONFIG ROUND: fresh databases, the broker on the database or proxy, one run.
run_config() {
    local config=$1 round=$2 url shards=0 i
    local tag="r${round}"
    case $config in
        direct)
            # queen_ext where PostgreSQL has it, as `queen shards init` gives every shard.
            psql_on 0 "CREATE DATABASE direct_$tag"
            url=$(conn 0 "direct_$tag")
            if psql -X -q -A -t "$url" -c "SELECT 1 FROM pg_available_extensions WHERE name = 'queen_ext'" | grep -q 1; then
                psql -X -q "$url" -c "CREATE EXTENSION queen_ext" >/dev/null
            fi
            ;;
        proxy-*)
            shards=${config#proxy-}
            psql_on 0 "CREATE DATABASE proxy_${shards}_$tag"
            local args=(shards init --proxy "$(conn 0 "proxy_${shards}_$tag")")
            for ((i = 0; i < shards; i++)); do
                psql_on "$i" "CREATE DATABASE shard_${shards}_$tag"
                args+=(--shard "$(conn "$i" "shard_${shards}_$tag")")
            done
            "$QUEEN" "${args[@]}" >"$WORK/init-$config-$tag.log" 2>&1 || die "shards init failed ($WORK/init-$config-$tag.log)"
            url=$(conn 0 "proxy_${shards}_$tag")
            ;;
        *) die "unknown configuration '$config'" ;;
    esac
    local port
    port=$(free_port)
    HOST=127.0.0.1 PORT=$port QUEEN_DATABASE_URL="$url" QUEEN_SPOOL_DIR="$WORK/spool-$config-$tag" \
        "$QUEEN" >"$WORK/broker-$config-$tag.log" 2>&1 &
    BROKER_PID=$!
    for i in $(seq 1 240); do
        curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
        kill -0 "$BROKER_PID" 2>/dev/null || die "the broker exited ($WORK/broker-$config-$tag.log)"
        sleep 0.5
    done
    echo "== $config round $round"
    local rc=0
    "$BENCH" --url "http://127.0.0.1:$port" --quiet --max-seconds "$MAX_SECONDS" --label "$config #$round" \
        --json-out "$RESULTS" --mode both --messages "$MESSAGES" --partitions "$PARTITIONS" \
        --connections "$CONNECTIONS" --push-batch "$PUSH_BATCH" --pop-batch "$POP_BATCH" \
        --payload-bytes "$PAYLOAD_BYTES" || rc=$?
    [[ $rc == 0 ]] || { echo "shards.sh: $config round $round FAILED (queen_bench exit $rc)" >&2; failed=1; }
    stop_broker
}

for round in $(seq 1 "$ROUNDS"); do
    for config in $CONFIGS; do run_config "$config" "$round"; done
done

echo
echo "== medians over $ROUNDS round(s): msgs/s, and each against direct"
jq -rs '
  def median: map(select(. != null)) | sort | if length == 0 then null
    elif length % 2 == 1 then .[(length - 1) / 2] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  (map(select(.label | startswith("direct "))) | map(.throughput.endToEnd) | median) as $direct |
  group_by(.label | sub(" #[0-9]+$"; "")) |
  (["config", "runs", "push/s", "consume/s", "e2e/s", "e2e vs direct", "dup", "missing", "order"] | @tsv),
  (.[] | [(.[0].label | sub(" #[0-9]+$"; "")), (length | tostring),
          (map(.throughput.push) | median | round | tostring), (map(.throughput.consume) | median | round | tostring),
          (map(.throughput.endToEnd) | median | round | tostring),
          (if $direct then ((map(.throughput.endToEnd) | median) / $direct * 100 | round / 100 | tostring) else "-" end),
          (map(.verification.duplicates // 0) | add | tostring), (map(.verification.missing // 0) | add | tostring),
          (map(.verification.orderViolations // 0) | add | tostring)] | @tsv)
' "$RESULTS" | column -t -s $'\t'
echo "conditions: $(tail -n 1 "$RESULTS" | jq -r .conditionLine)"
[[ $failed == 0 ]] || die "at least one run failed its checks"
echo "all runs passed their checks"
