#!/usr/bin/env bash
# The comparison harness (issue 5; docs/benchmarks.md): one private PostgreSQL 15 (fsync on,
# synchronous_commit on) serving, in turn, the queen broker, PgQ and pg-boss, plus the
# hardware ceilings of that machine, all in one run; prints one table.
#
#   bench/compare.sh [BUILD_DIR]                     (make bench)
#
# Environment (defaults in brackets):
#   MESSAGES [200000]       N of the headline work: produce N ≈200-byte JSON messages, consume
#                           and acknowledge all N
#   SCENARIOS ["a b c d e f g s"]  queen scenarios (a push, b pop+ack a backlog, c both at
#                           once, d c over 1/100/10,000/100,000 partitions, e fan-out to 10
#                           groups, f 4-stage ordered pipeline over 1,000 partitions, g latency
#                           at a fixed moderate rate, s the partition sweep: c over
#                           SWEEP_PARTITIONS with pops of each of SWEEP_POP_PARTITIONS)
#   PEERS ["pgq pgboss"]    peers to run (installed from the package registries when missing;
#                           empty: none)
#   CEILINGS [1]            0 skips pg_test_fsync and the pgbench raw-insert ceiling
#   EXTENSION [off]         on: CREATE EXTENSION queen_ext in the broker's database
#   FANOUT_MESSAGES [N/10]  PIPELINE_MESSAGES [N/4]  RATE [2000]  RATE_MESSAGES [RATE × 20]
#   PARTITIONS_LIST ["1 100 10000 100000"]
#   SWEEP_PARTITIONS ["1 100 10000 100000 1000000"]  SWEEP_POP_PARTITIONS ["1 100"]: a sweep
#                           row over P partitions pushes max(N, 2P) messages, so that every
#                           partition is created by a push; SWEEP_PROFILE [100000]: the
#                           partition count whose rows keep a pg_stat_statements profile
#                           (WORK/profile-P*-k*.txt) and whose backlog is pushed, then consumed
#   KEEP [0]                1 keeps the work directory (logs, JSON lines)
#   PROFILE_ROWS [15]       statements kept per database in the pg_stat_statements profiles
# Every line of the table states its conditions; JSON lines are in WORK/results.jsonl.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR=$(cd "${1:-build}" && pwd)
# shellcheck source=bench/lib/common.sh
source "$ROOT/bench/lib/common.sh"
# shellcheck source=bench/lib/postgres.sh
source "$ROOT/bench/lib/postgres.sh"

N=${MESSAGES:-200000}
SCENARIOS=${SCENARIOS:-"a b c d e f g s"}
PEERS=${PEERS-"pgq pgboss"}
CEILINGS=${CEILINGS:-1}
EXTENSION=${EXTENSION:-off}
FANOUT_MESSAGES=${FANOUT_MESSAGES:-$((N / 10))}
PIPELINE_MESSAGES=${PIPELINE_MESSAGES:-$((N / 4))}
RATE=${RATE:-2000}
RATE_MESSAGES=${RATE_MESSAGES:-$((RATE * 20))}
PARTITIONS_LIST=${PARTITIONS_LIST:-"1 100 10000 100000"}
SWEEP_PARTITIONS=${SWEEP_PARTITIONS:-"1 100 10000 100000 1000000"}
SWEEP_POP_PARTITIONS=${SWEEP_POP_PARTITIONS:-"1 100"}
SWEEP_PROFILE=${SWEEP_PROFILE:-100000}
KEEP=${KEEP:-0}
QUEEN="$BUILD_DIR/queen"
QUEEN_BENCH="$BUILD_DIR/queen_bench"
PGQ_BENCH="$BUILD_DIR/pgq_bench"

die() { echo "compare.sh: $*" >&2; exit 1; }
[[ -x $QUEEN && -x $QUEEN_BENCH ]] || die "build first: make build"
command -v jq >/dev/null || die "jq is needed (apt-get install jq)"

# Prints the table and the ratios of a results file (also: REPORT_ONLY=FILE bench/compare.sh).
print_table() {
    local results=$1
echo
echo "== results: N=$N messages of ≈200-byte JSON unless stated; one PostgreSQL 15 (fsync on, synchronous_commit on)"
jq -rs --argjson fsync "$FSYNC_OPS" --argjson raw "$RAW_CEILING" '
  def f0: if . == null then "-" else (. | floor | tostring) end;
  def us($n): if . == null or $n == null or $n == 0 then "-" else ((. * 1000000 / $n) | floor | tostring) end;
  def thr($k): .throughput[$k] // null;
  def count: (if (.conditions | type) == "object" then .conditions.messages else null end) // .messages // null;
  (["system", "scenario", "produce/s", "consume/s", "e2e/s", "CPU µs/msg PG", "broker", "bench", "dup/missing/order", "conditions"] | @tsv),
  (.[] | [.system, .scenario, (thr("push") // thr("produce") | f0), (thr("consume") | f0), (thr("endToEnd") | f0),
          (count as $n | .cpuSeconds.postgres | us($n)),
          (count as $n | if .system == "queen" then (.cpuSeconds.broker | us($n)) else "-" end),
          (count as $n | .clientCpuSeconds | us($n)),
          ((.verification // {}) | "\(.duplicates // "-")/\(.missing // "-")/\(.orderViolations // "-")"),
          (.conditionLine // (.conditions | tostring))] | @tsv)
' "$results" | column -t -s $'\t' | cut -c1-250
echo
jq -rs --argjson fsync "$FSYNC_OPS" --argjson raw "$RAW_CEILING" '
  def pick($s; $sc; $k): (map(select(.system == $s and .scenario == $sc)) | .[0].throughput[$k]) // null;
  def ratio($a; $b): if $a == null or $b == null or $b == 0 then "-" else (($a / $b) * 100 | round) / 100 | tostring end;
  (pick("queen"; "a push"; "push")) as $qp | (pick("queen"; "b consume"; "consume")) as $qc |
  (pick("queen"; "c both"; "endToEnd")) as $qe |
  (pick("pgq"; "produce"; "produce")) as $pp | (pick("pgq"; "consume"; "consume")) as $pc | (pick("pgq"; "both"; "endToEnd")) as $pe |
  (pick("pg-boss"; "produce"; "produce")) as $bp | (pick("pg-boss"; "consume"; "consume")) as $bc |
  (pick("pg-boss"; "both"; "endToEnd")) as $be |
  "queen / PgQ:     produce \(ratio($qp; $pp))  consume \(ratio($qc; $pc))  end to end \(ratio($qe; $pe))   (targets: e2e ≥ 2)",
  "queen / pg-boss: produce \(ratio($qp; $bp))  consume \(ratio($qc; $bc))  end to end \(ratio($qe; $be))   (target: e2e ≥ 30)",
  (map(select(.system == "queen" and (.scenario | startswith("s both ")))) as $sweep |
   ($sweep | map(.conditions.popPartitions) | unique[]) as $k |
   ($sweep | map(select(.conditions.popPartitions == $k)) | map({key: (.conditions.partitions | tostring), value: .throughput}) | from_entries) as $by |
   "sweep, pops of partitions=\($k): e2e ÷ 100 partitions: 10,000 \(ratio($by["10000"].endToEnd; $by["100"].endToEnd))  100,000 \(ratio($by["100000"].endToEnd; $by["100"].endToEnd))  1,000,000 \(ratio($by["1000000"].endToEnd; $by["100"].endToEnd))"),
  (map(select(.system == "queen" and (.scenario | startswith("s push backlog ")))) | .[0]) as $bp |
  (map(select(.system == "queen" and (.scenario | startswith("s consume backlog ")))) | .[0]) as $bc |
  (if $bp == null then empty else
   "sweep, a backlog over \($bp.conditions.partitions) partitions: consume ÷ push \(ratio($bc.throughput.consume; $bp.throughput.push)) (target ≥ 1)" end),
  "ceilings: disk \($fsync // "-") fdatasync commits/s; raw segment INSERT \($raw // "-") msgs/s; queen push = \(ratio($qp; $raw)) of it (target ≥ 0.5); consume / push = \(ratio($qc; $qp)) (target ≥ 1)"
' "$results"
}

if [[ -n ${REPORT_ONLY:-} ]]; then
    FSYNC_OPS=${FSYNC_OPS:-null} RAW_CEILING=${RAW_CEILING:-null}
    print_table "$REPORT_ONLY"
    exit 0
fi

WORK=$(mktemp -d /tmp/queen-compare.XXXXXX)
chmod 755 "$WORK"
RESULTS=$WORK/results.jsonl
: >"$RESULTS"
BROKER_PID=""

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    [[ -n $BROKER_PID ]] && { kill -TERM "$BROKER_PID" 2>/dev/null || true; wait "$BROKER_PID" 2>/dev/null || true; }
    pkill -f "pgqd $WORK" 2>/dev/null || true
    pg_stop
    if [[ $KEEP == 1 || $rc != 0 ]]; then echo "compare.sh: work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== machine: $(nproc) cpus, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- peers installed first (package registries), so nothing is fetched during a measurement
for peer in $PEERS; do
    case $peer in
        pgq) bash "$ROOT/bench/peers/pgq/install.sh"; [[ -x $PGQ_BENCH ]] || die "$PGQ_BENCH missing: make build" ;;
        pgboss) bash "$ROOT/bench/peers/pgboss/install.sh" ;;
        *) die "unknown peer $peer" ;;
    esac
done

pg_start "$WORK/pg"
PM=$(pg_postmaster_pid)
echo "== PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT (fsync=on, synchronous_commit=on, shared_buffers=512MB)"
for db in queen pgq pgboss ceiling; do
    pg_sql postgres "CREATE DATABASE $db" >/dev/null
    pg_sql "$db" "CREATE EXTENSION pg_stat_statements" >/dev/null
done

# ---- measurement wrapper: runs a command, adds CPU seconds of PostgreSQL (and a pid) to the
# JSON line it appended to RESULTS
measure() {  # system label extra_pid -- command...
    local system=$1 label=$2 extra=$3
    shift 4
    local p0 b0 m0 lines
    # Backends that exited are counted once the postmaster has reaped them (its cutime): let
    # those of the previous run settle before the first reading and after the command.
    sleep 1
    p0=$(postgres_ticks "$PM"); b0=0; [[ -n $extra ]] && b0=$(proc_ticks "$extra")
    m0=$(machine_ticks)
    lines=$(wc -l <"$RESULTS")
    echo "-- $system $label: $*" >>"$WORK/commands.log"
    local rc=0
    "$@" >>"$WORK/output.log" 2>&1 || rc=$?
    sleep 1
    local p1 b1 m1
    p1=$(postgres_ticks "$PM"); b1=0; [[ -n $extra ]] && b1=$(proc_ticks "$extra")
    m1=$(machine_ticks)
    if [[ $(wc -l <"$RESULTS") -gt $lines ]]; then
        local last
        last=$(tail -n 1 "$RESULTS" | jq -c --arg s "$system" --arg l "$label" --argjson rc "$rc" \
            --argjson pg "$(awk -v a="$p0" -v b="$p1" -v t="$CLK_TCK" 'BEGIN{printf "%.2f", (b-a)/t}')" \
            --argjson br "$(awk -v a="$b0" -v b="$b1" -v t="$CLK_TCK" 'BEGIN{printf "%.2f", (b-a)/t}')" \
            --argjson busy "$(awk -v a="${m0% *}" -v b="${m1% *}" -v t="$CLK_TCK" 'BEGIN{printf "%.2f", (b-a)/t}')" \
            '. + {system: $s, scenario: $l, exitStatus: $rc, cpuSeconds: {postgres: $pg, broker: $br, machineBusy: $busy}}')
        sed -i '$d' "$RESULTS"
        echo "$last" >>"$RESULTS"
    else
        echo "{\"system\":\"$system\",\"scenario\":\"$label\",\"exitStatus\":$rc,\"result\":\"no result\"}" >>"$RESULTS"
    fi
    echo "   $system $label: exit $rc; $(tail -n 1 "$RESULTS" | jq -r '[.throughput // {} | to_entries[] | select(.value != null and (.key | test("^(push|produce|consume|endToEnd)$"))) | "\(.key) \(.value | floor)/s"] | join(", ")')"
}

# ---- hardware ceilings, part 1: commits per second of this disk
FSYNC_OPS=null
if [[ $CEILINGS == 1 ]]; then
    echo "== ceiling: pg_test_fsync"
    as_postgres "$PG_BIN/pg_test_fsync" -s 2 -f "$WORK/pg/fsync.test" >"$WORK/pg_test_fsync.txt" 2>&1 || true
    FSYNC_OPS=$(awk '/one 8kB write/ {s=1} s && $1 == "fdatasync" {print int($2); exit}' "$WORK/pg_test_fsync.txt")
    FSYNC_OPS=${FSYNC_OPS:-null}
    echo "   fdatasync, one 8 kB write: $FSYNC_OPS ops/s"
fi

# ---- the broker
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
POOL_SIZE=$(sed -n 's/.*DB_POOL_SIZE=\([0-9]*\).*/\1/p' "$WORK/broker.log" | head -n 1)
RSS_START=$(rss_kib "$BROKER_PID")

# The queen database's statements between pss_mark and pss_since_mark (calls, time, rows),
# most total time first: the profile of one run without resetting the whole run's.
pss_mark() {
    pg_sql queen "CREATE UNLOGGED TABLE IF NOT EXISTS public.bench_pss_mark AS
                  SELECT queryid, calls, total_exec_time, rows FROM pg_stat_statements WHERE false;
                  TRUNCATE public.bench_pss_mark;
                  INSERT INTO public.bench_pss_mark SELECT queryid, calls, total_exec_time, rows FROM pg_stat_statements
                   WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'queen')" >/dev/null
}
pss_since_mark() {
    pg_sql queen "SELECT s.calls - coalesce(m.calls, 0) AS calls,
                         round((s.total_exec_time - coalesce(m.total_exec_time, 0))::numeric) AS total_ms,
                         round(((s.total_exec_time - coalesce(m.total_exec_time, 0))
                                / nullif(s.calls - coalesce(m.calls, 0), 0))::numeric, 3) AS mean_ms,
                         s.rows - coalesce(m.rows, 0) AS rows, left(regexp_replace(s.query, '\s+', ' ', 'g'), 140) AS query
                    FROM pg_stat_statements s LEFT JOIN public.bench_pss_mark m USING (queryid)
                   WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = 'queen')
                     AND s.calls > coalesce(m.calls, 0)
                   ORDER BY total_ms DESC LIMIT ${PROFILE_ROWS:-15}"
}

qb() {  # label, then queen_bench options
    local label=$1
    shift
    measure queen "$label" "$BROKER_PID" -- "$QUEEN_BENCH" --url "$URL" --quiet --max-seconds 1200 --label "$label" \
        --json-out "$RESULTS" "$@"
}
stamp=$(date +%s)
SEGS_BEFORE=0
COMMITS_BEFORE=0
for s in $SCENARIOS; do
    case $s in
        a)
            COMMITS_BEFORE=$(pg_sql queen "SELECT xact_commit FROM pg_stat_database WHERE datname = 'queen'")
            qb "a push" --mode push --queue "backlog-$stamp" --messages "$N"
            SEG_STATS=$(pg_sql queen "SELECT count(*), round(avg(octet_length(s.body))), round(avg(s.last_offset - s.first_offset + 1), 2)
                FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
                JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'backlog-$stamp'")
            COMMITS=$(( $(pg_sql queen "SELECT xact_commit FROM pg_stat_database WHERE datname = 'queen'") - COMMITS_BEFORE ))
            echo "   push wrote segments|avg bytes|msgs per segment: $SEG_STATS over ~$COMMITS commits"
            ;;
        b) qb "b consume" --mode consume --queue "backlog-$stamp" --messages "$N" ;;
        c) qb "c both" --mode both --messages "$N" ;;
        d) for p in $PARTITIONS_LIST; do qb "d both P=$p" --mode both --partitions "$p" --messages "$N"; done ;;
        e) qb "e fan-out 10 groups" --mode both --groups 10 --producers 4 --consumers 12 --messages "$FANOUT_MESSAGES" ;;
        f) qb "f pipeline 4 stages" --mode pipeline --stages 4 --partitions 1000 --messages "$PIPELINE_MESSAGES" ;;
        g) qb "g latency at $RATE/s" --mode both --rate "$RATE" --messages "$RATE_MESSAGES" ;;
        s)
            for k in $SWEEP_POP_PARTITIONS; do
                for p in $SWEEP_PARTITIONS; do
                    [[ $p == "$SWEEP_PROFILE" ]] && pss_mark
                    qb "s both P=$p pop partitions=$k" --mode both --partitions "$p" --pop-partitions "$k" \
                        --messages "$(( 2 * p > N ? 2 * p : N ))" --max-seconds 3600
                    [[ $p == "$SWEEP_PROFILE" ]] && pss_since_mark >"$WORK/profile-P$p-k$k.txt"
                done
            done
            # A backlog over SWEEP_PROFILE partitions, pushed, then consumed by pops of the
            # last SWEEP_POP_PARTITIONS value.
            qb "s push backlog P=$SWEEP_PROFILE" --mode push --queue "sweep-$stamp" --partitions "$SWEEP_PROFILE" \
                --messages "$(( 2 * SWEEP_PROFILE > N ? 2 * SWEEP_PROFILE : N ))" --max-seconds 3600
            qb "s consume backlog P=$SWEEP_PROFILE pop partitions=$k" --mode consume --queue "sweep-$stamp" \
                --partitions "$SWEEP_PROFILE" --pop-partitions "$k" \
                --messages "$(( 2 * SWEEP_PROFILE > N ? 2 * SWEEP_PROFILE : N ))" --max-seconds 3600
            ;;
        *) die "unknown scenario $s" ;;
    esac
done
RSS_END=$(rss_kib "$BROKER_PID")
kill -TERM "$BROKER_PID" 2>/dev/null || true
wait "$BROKER_PID" 2>/dev/null || true
BROKER_PID=""

# ---- hardware ceilings, part 2: raw INSERT of the broker's own segments with pgbench, the
# same count per transaction and the same number of writers as the broker's push produced
RAW_CEILING=null
if [[ $CEILINGS == 1 && -n ${SEG_STATS:-} ]]; then
    IFS='|' read -r SEGS SEG_BYTES MSGS_PER_SEG <<<"$SEG_STATS"
    PER_TX=$(( (SEGS + COMMITS - 1) / (COMMITS > 0 ? COMMITS : 1) ))
    WRITERS=${POOL_SIZE:-4}
    pg_sql ceiling "CREATE TABLE raw_segments (partition_id bigint NOT NULL, first_offset bigint NOT NULL,
                        body bytea NOT NULL, PRIMARY KEY (partition_id, first_offset))" >/dev/null
    pg_sql ceiling "CREATE SEQUENCE raw_seq" >/dev/null
    # The broker's own segment bodies (same bytes, same compressibility), PER_TX of them.
    "$PG_BIN/psql" -X -q "$(pg_conninfo queen)" -c "\\copy (SELECT body FROM queen.log_segments LIMIT $PER_TX) TO '$WORK/bodies.copy'"
    pg_sql ceiling "CREATE TABLE raw_bodies (body bytea)" >/dev/null
    "$PG_BIN/psql" -X -q "$(pg_conninfo ceiling)" -c "\\copy raw_bodies FROM '$WORK/bodies.copy'"
    cat >"$WORK/raw_insert.sql" <<SQL
INSERT INTO raw_segments (partition_id, first_offset, body)
SELECT nextval('raw_seq') % 100, nextval('raw_seq'), body FROM raw_bodies;
SQL
    echo "== ceiling: pgbench raw INSERT of $PER_TX segments of ≈$SEG_BYTES bytes per transaction, $WRITERS writers, 10 s"
    "$PG_BIN/pgbench" -n -h 127.0.0.1 -p "$PG_PORT" -U postgres -c "$WRITERS" -j "$WRITERS" -T 10 \
        -f "$WORK/raw_insert.sql" ceiling >"$WORK/pgbench.txt" 2>&1 || true
    TPS=$(awk '/^tps = / {print $3; exit}' "$WORK/pgbench.txt")
    RAW_CEILING=$(awk -v t="${TPS:-0}" -v k="$PER_TX" -v m="$MSGS_PER_SEG" 'BEGIN {printf "%d", t * k * m}')
    echo "   $TPS transactions/s × $PER_TX segments × $MSGS_PER_SEG messages = $RAW_CEILING messages/s"
fi

# ---- peers, same PostgreSQL, same N
for peer in $PEERS; do
    case $peer in
        pgq)
            measure pgq "produce" "" -- "$PGQ_BENCH" --conninfo "$(pg_conninfo pgq)" --queue "pq$stamp" --mode produce \
                --messages "$N" --json-out "$RESULTS" --label produce
            measure pgq "consume" "" -- "$PGQ_BENCH" --conninfo "$(pg_conninfo pgq)" --queue "pq$stamp" --mode consume \
                --messages "$N" --json-out "$RESULTS" --label consume
            measure pgq "both" "" -- "$PGQ_BENCH" --conninfo "$(pg_conninfo pgq)" --queue "pqb$stamp" --mode both \
                --messages "$N" --json-out "$RESULTS" --label both
            ;;
        pgboss)
            for mode in produce consume; do
                measure pg-boss "$mode" "" -- node "$ROOT/bench/peers/pgboss/bench.mjs" --url \
                    "postgres://postgres@127.0.0.1:$PG_PORT/pgboss" --queue "pb$stamp" --mode "$mode" --messages "$N" \
                    --max-seconds 1800 --json-out "$RESULTS" --label "$mode" --quiet
            done
            measure pg-boss "both" "" -- node "$ROOT/bench/peers/pgboss/bench.mjs" --url \
                "postgres://postgres@127.0.0.1:$PG_PORT/pgboss" --queue "pbb$stamp" --mode both --messages "$N" \
                --max-seconds 1800 --json-out "$RESULTS" --label both --quiet
            ;;
    esac
done

# Where PostgreSQL spent its time, per database: the statements with the most total time.
for db in queen pgq pgboss; do
    pg_sql "$db" "SELECT calls, round(total_exec_time::numeric) AS total_ms, round(mean_exec_time::numeric, 3) AS mean_ms,
                         rows, left(regexp_replace(query, '\s+', ' ', 'g'), 140) AS query
                    FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
                   WHERE d.datname = '$db' ORDER BY total_exec_time DESC LIMIT ${PROFILE_ROWS:-15}" \
        >"$WORK/pg_stat_statements-$db.txt" 2>/dev/null || true
done
print_table "$RESULTS"
echo "statement profiles: $WORK/pg_stat_statements-*.txt (KEEP=1 keeps them)"
echo "broker RSS over the queen scenarios: $RSS_START → $RSS_END KiB; JSON lines: $RESULTS"
cp "$RESULTS" "${BENCH_RESULTS_OUT:-/dev/null}" 2>/dev/null || true
failed=$(jq -s '[.[] | select(.exitStatus != 0)] | length' "$RESULTS")
[[ $failed == 0 ]] || die "$failed run(s) failed their checks (see $WORK/output.log)"
