#!/usr/bin/env bash
# What a lane costs: the headline load over 100 to 1,000,000 partitions, one-lane and
# 100-lane pops, stock path and queen_ext, with PostgreSQL's time per pop and per ack, its
# CPU per message and the bytes an idle lane takes on disk (docs/benchmarks.md, "Per-lane
# cost").
#
#   bench/lanes.sh [BUILD_DIR]        (make bench-lanes; default BUILD_DIR: build)
#
# One private PostgreSQL 15 (bench/lib/postgres.sh: fsync on, synchronous_commit on,
# shared_buffers 512MB, pg_stat_statements preloaded). For each partition count P of LANES:
#   1. a template database: the broker applies its schema, then P lanes p0..p{P-1} of queue
#      `lanes` are created by queen.push (one message each, PRECREATE_BATCH lanes per call)
#      and drained by autoAck queue-mode pops (the first one registers the queue-mode group,
#      so every lane has its cursor); VACUUM ANALYZE. The lanes are idle: every cursor at its
#      partition's end. The bytes of queen.log_partitions, queen.log_consumers and
#      queen.log_cursor_keys (pg_total_relation_size: heap, indexes, TOAST) are measured here.
#   2. per path of PATHS (stock: no extension; ext: CREATE EXTENSION queen_ext, as
#      bench/compare-codec.sh switches paths) and per pop width K of POP_LANES: a copy of the
#      template (CREATE DATABASE … TEMPLATE, FILE_COPY), a fresh broker on it, then the
#      headline load of `make bench` over the P lanes: queen_bench --mode both (8 producers,
#      8 consumers, 16 connections), MESSAGES messages of 200-byte JSON (message i to lane
#      p<i mod P>), push batches of 100, pop batches of 100 with `partitions=K`, explicit
#      acks, dedup on. Recorded: msgs/s, queen_bench's verification (duplicates, missing =
#      gaps, order violations), pg_stat_statements of the run (top-level calls of
#      queen.pop_fused/queen.pop and of queen.ack_fused/queen.ack: calls and total_exec_time,
#      which includes lock waits), PostgreSQL's and the broker's CPU (utime + stime from
#      /proc, the postmaster's reaped children included) per message, WAL per message, and
#      the three tables' bytes after the run. The copy is dropped afterwards.
#   3. at the largest P, after the first pop width's run of each path and before its copy is
#      dropped (CALLGRIND=1): one one-lane claim (queen.pop_fused, batch 100, partitions=1)
#      and one ack of it (queen.ack_fused by transaction id with the lease) as the broker
#      sends them, in `postgres --single` under callgrind (--dump-before=ReadyForQuery: one
#      profile part per statement), after CALLGRIND_WARMUP claim/ack pairs on other lanes
#      (past the plan cache's first five custom plans, as in a long-lived backend). The ack
#      passes the claim's lease id, read by a statement between the two. The results keep the
#      raw parts and callgrind_annotate's figures: the inclusive Ir of named stages (parse,
#      plan, executor start-up, SPI, B-tree, heap, WAL, commit, queen_ext's entry points) and
#      the top functions, exclusive and inclusive. The postgres binary is stripped: a static
#      function shows as its address, labelled with its heaviest caller.
#   4. latency where lanes are few (RATE > 0): per path, on a copy of the 100-lane template
#      (when LANES has 100), the same load paced at RATE messages/s (RATE_MESSAGES of them)
#      with one-lane pops; queen_bench's end-to-end latency (p50, p99), and its pop and ack
#      request latencies.
# Then the template at the largest P is compacted (VACUUM FULL of the three tables) and
# measured again. Prints the table; raw results (one JSON line per row, the template sizes,
# statement profiles, callgrind files) go to RESULTS_DIR.
#
# Environment (defaults in brackets):
#   LANES ["100 10000 100000 1000000"]   partition counts
#   POP_LANES ["1 100"]                   the pops' `partitions` parameter (1: Queen clients' default)
#   PATHS ["stock ext"]                   ext needs queen_ext installed (make ext-install)
#   MESSAGES [200000]                     messages per row (every row the same)
#   CONNECTIONS [16]  PUSH_BATCH [100]  POP_BATCH [100]  PAYLOAD_BYTES [200]
#   PRECREATE_BATCH [10000]               lanes per pre-creating push and drain pop
#   CALLGRIND [1]                         0: no profile;  CALLGRIND_WARMUP [8] pairs before it
#   RATE [2000]  RATE_MESSAGES [RATE × 20] the paced row of step 4 (RATE=0: none)
#   MAX_SECONDS [1800]                    time limit of one queen_bench run
#   RESULTS_DIR [BUILD_DIR/bench-lanes/<UTC time>]
#   KEEP [0]                              1 keeps the work directory (PostgreSQL's data, logs)
#   REPORT_ONLY [] a RESULTS_DIR of an earlier run: print its table only
# Exit status: 0 when every row passed its checks, 1 otherwise.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib/common.sh
source "$ROOT/bench/lib/common.sh"
# shellcheck source=bench/lib/postgres.sh
source "$ROOT/bench/lib/postgres.sh"
die() { echo "lanes.sh: $*" >&2; exit 1; }
command -v jq >/dev/null || die "jq is needed (apt-get install jq)"

LANES=${LANES:-"100 10000 100000 1000000"}
POP_LANES=${POP_LANES:-"1 100"}
PATHS=${PATHS:-"stock ext"}
MESSAGES=${MESSAGES:-200000}
CONNECTIONS=${CONNECTIONS:-16}
PUSH_BATCH=${PUSH_BATCH:-100}
POP_BATCH=${POP_BATCH:-100}
PAYLOAD_BYTES=${PAYLOAD_BYTES:-200}
PRECREATE_BATCH=${PRECREATE_BATCH:-10000}
CALLGRIND=${CALLGRIND:-1}
CALLGRIND_WARMUP=${CALLGRIND_WARMUP:-8}
RATE=${RATE:-2000}
RATE_MESSAGES=${RATE_MESSAGES:-$((RATE * 20))}
MAX_SECONDS=${MAX_SECONDS:-1800}
KEEP=${KEEP:-0}
QUEUE=lanes
GROUP=__QUEUE_MODE__

# ---- the table (also REPORT_ONLY=RESULTS_DIR)
print_table() {
    local dir=$1
    echo
    echo "== per-lane cost: the headline load (both at once, explicit acks, dedup on) over P idle lanes"
    jq -rs '
      def f0: if . == null then "-" else (. | round | tostring) end;
      def f1: if . == null then "-" else ((. * 10 | round) / 10 | tostring) end;
      def f2: if . == null then "-" else ((. * 100 | round) / 100 | tostring) end;
      def per($a; $b): if $a == null or $b == null or $b == 0 then null else $a / $b end;
      map(select((.rate // 0) == 0)) |
      (map(select(.path == "stock" and .partitions == 100 and .popLanes == 1)) | .[0].throughput.endToEnd // null) as $base |
      (["path", "lanes", "pop lanes", "messages", "e2e msgs/s", "÷ base", "msgs/pop", "PG CPU µs/msg", "broker µs/msg",
        "WAL B/msg", "dup/gaps/order", "result"] | @tsv),
      (.[] | [.path, (.partitions | tostring), (.popLanes | tostring), (.messages | tostring),
              (.throughput.endToEnd | f0),
              (if $base == null then "-" else (per(.throughput.endToEnd; $base) | f2) end),
              (.msgsPerPop | f1),
              (per(.cpuSeconds.postgres * 1000000; .messages) | f1), (per(.cpuSeconds.broker * 1000000; .messages) | f1),
              (.walBytesPerMessage | f0),
              "\(.verification.duplicates // "-")/\(.verification.missing // "-")/\(.verification.orderViolations // "-")",
              .result] | @tsv)
    ' "$dir/results.jsonl" | column -t -s $'\t'
    echo "÷ base: end to end msgs/s ÷ the stock row of 100 lanes with one-lane pops (this run). CPU: utime + stime of all"
    echo "PostgreSQL processes and of the broker during the run ÷ messages. dup/gaps/order: queen_bench's verification."
    echo
    echo "== PostgreSQL time per pop and per ack (pg_stat_statements: top-level total_exec_time, lock waits included)"
    jq -rs '
      def f0: if . == null then "-" else (. | round | tostring) end;
      def f1: if . == null then "-" else ((. * 10 | round) / 10 | tostring) end;
      def per($a; $b): if $a == null or $b == null or $b == 0 then null else $a / $b end;
      (["path", "lanes", "pop lanes", "pop calls", "pop µs/call", "pop requests", "pop µs/request", "ack calls",
        "ack µs/call", "ack requests", "ack µs/request", "pop+ack µs/msg", "push µs/msg", "other ms"] | @tsv),
      (.[] | select((.rate // 0) == 0) | ((.pops // 0) + (.emptyPops // 0)) as $popreq |
             [.path, (.partitions | tostring), (.popLanes | tostring),
              (.statements.pop.calls | tostring), (per(.statements.pop.ms * 1000; .statements.pop.calls) | f0),
              ($popreq | tostring), (per(.statements.pop.ms * 1000; $popreq) | f0),
              (.statements.ack.calls | tostring), (per(.statements.ack.ms * 1000; .statements.ack.calls) | f0),
              (.ackRequests | tostring), (per(.statements.ack.ms * 1000; .ackRequests) | f0),
              (per((.statements.pop.ms + .statements.ack.ms) * 1000; .messages) | f1),
              (per((.statements.push.ms // null) * 1000; .messages) | f1), (.statements.other.ms // 0 | f0)] | @tsv)
    ' "$dir/results.jsonl" | column -t -s $'\t'
    echo "pop: queen.pop_fused + queen.pop; ack: queen.ack_fused + queen.ack. A fused call serves several requests"
    echo "(requests: queen_bench's pops, empty ones included, and ack requests). other: every other top-level statement"
    echo "of the run, in ms: the broker's background work (stats refresh, housekeeping, notifications), which grows with"
    echo "the lanes and with the run's length (statements-*.txt)."
    if jq -e -s 'any(.[]; (.rate // 0) > 0)' "$dir/results.jsonl" >/dev/null; then
        echo
        echo "== latency at a fixed rate (one-lane pops; queen_bench, ms)"
        jq -rs '
          def f1: if . == null then "-" else ((. * 10 | round) / 10 | tostring) end;
          (["path", "lanes", "rate msgs/s", "messages", "achieved msgs/s", "e2e p50", "e2e p99", "pop p99", "ack p99",
            "dup/gaps/order", "result"] | @tsv),
          (.[] | select((.rate // 0) > 0) |
                 [.path, (.partitions | tostring), (.rate | tostring), (.messages | tostring),
                  (.throughput.endToEnd | f1), (.latencyMs.endToEnd.p50 | f1), (.latencyMs.endToEnd.p99 | f1),
                  (.latencyMs.pop.p99 | f1), (.latencyMs.ack.p99 | f1),
                  "\(.verification.duplicates // "-")/\(.verification.missing // "-")/\(.verification.orderViolations // "-")",
                  .result] | @tsv)
        ' "$dir/results.jsonl" | column -t -s $'\t'
        echo "e2e: from a message's push to its delivery to a consumer; pop, ack: one request's round trip."
    fi
    if [[ -s $dir/sizes.jsonl ]]; then
        echo
        echo "== bytes on disk per idle lane (queen.log_partitions + queen.log_consumers + queen.log_cursor_keys, with indexes)"
        jq -rs '
          (["lanes", "state", "log_partitions", "log_consumers", "log_cursor_keys", "total", "bytes/lane"] | @tsv),
          (.[] | [(.partitions | tostring), .state, (.tables["queen.log_partitions"].total | tostring),
                  (.tables["queen.log_consumers"].total | tostring), (.tables["queen.log_cursor_keys"].total | tostring),
                  (.total | tostring), ((.total / .partitions) | round | tostring)] | @tsv)
        ' "$dir/sizes.jsonl" | column -t -s $'\t'
        echo "idle: after the lanes were created and drained, VACUUM ANALYZE; compacted: the same after VACUUM FULL."
    fi
    local f
    for f in "$dir"/callgrind-*.txt; do
        [[ -f $f ]] || continue
        echo
        head -n 2 "$f"
        awk '/^== / { show = ($0 !~ /inclusive Ir$/); n = 0; if (show) print; next } show && n++ < 12' "$f"
    done
}

if [[ -n ${REPORT_ONLY:-} ]]; then
    print_table "$REPORT_ONLY"
    exit 0
fi

BUILD_DIR=$(cd "${1:-build}" 2>/dev/null && pwd) || die "no build directory '${1:-build}'"
QUEEN="$BUILD_DIR/queen"
QUEEN_BENCH="$BUILD_DIR/queen_bench"
[[ -x $QUEEN && -x $QUEEN_BENCH ]] || die "build queen and queen_bench first (make build)"
if [[ " $PATHS " == *" ext "* ]]; then
    [[ -f $("$PG_BIN/pg_config" --sharedir)/extension/queen_ext.control ]] || die "queen_ext is not installed: make ext-install"
fi
if [[ $CALLGRIND == 1 ]]; then
    if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
        die "CALLGRIND=1 needs valgrind (apt-get install valgrind); CALLGRIND=0 skips the profile"
    fi
fi
MAX_P=0
for p in $LANES; do ((p > MAX_P)) && MAX_P=$p; done

RESULTS_DIR=${RESULTS_DIR:-$BUILD_DIR/bench-lanes/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$RESULTS_DIR"
RESULTS_DIR=$(cd "$RESULTS_DIR" && pwd)
RESULTS=$RESULTS_DIR/results.jsonl
SIZES=$RESULTS_DIR/sizes.jsonl
: >"$RESULTS"
: >"$SIZES"
WORK=$(mktemp -d /tmp/queen-lanes.XXXXXX)
chmod 755 "$WORK"
BROKER_PID=""
BENCH_PID=""

stop_broker() {
    stop_process "$BROKER_PID"
    BROKER_PID=""
}
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    stop_process "$BENCH_PID"
    stop_broker
    pg_stop
    if [[ $KEEP == 1 || $rc != 0 ]]; then echo "lanes.sh: work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
say() { printf '[%s] %s\n' "$(date +%T)" "$*"; }

# ---- the broker on database $1; checks the codec path it reports against $2 (sql|queen_ext)
start_broker() {
    local db=$1 want=$2 port i
    port=$(free_port)
    URL="http://127.0.0.1:$port"
    QUEEN_DATABASE_URL=$(pg_conninfo "$db") HOST=127.0.0.1 PORT=$port QUEEN_SPOOL_DIR="$WORK/spool-$db" \
        "$QUEEN" >"$WORK/broker-$db.log" 2>&1 &
    BROKER_PID=$!
    for i in $(seq 1 600); do
        curl -sf "$URL/health" >/dev/null 2>&1 && break
        kill -0 "$BROKER_PID" 2>/dev/null || die "the broker exited during start-up: $(tail -5 "$WORK/broker-$db.log")"
        [[ $i == 600 ]] && die "the broker did not become healthy within 300 s"
        sleep 0.5
    done
    local path
    path=$(curl -s "$URL/health" | jq -r .codecPath)
    [[ $path == "$want" ]] || die "database $db: the broker reports codec path '$path', expected '$want'"
}

# ---- the bytes of the per-lane tables of database $1 as one JSON object
lane_sizes() {  # db partitions state
    pg_sql "$1" "SELECT json_build_object('partitions', $2, 'state', '$3',
                   'lanes', (SELECT count(*) FROM queen.log_partitions),
                   'cursors', (SELECT count(*) FROM queen.log_consumers),
                   'tables', json_object_agg(t, json_build_object('total', pg_total_relation_size(t),
                        'heap', pg_relation_size(t), 'indexes', pg_indexes_size(t))),
                   'total', sum(pg_total_relation_size(t)),
                   'others', (SELECT json_object_agg(o, pg_total_relation_size(o))
                                FROM unnest(ARRAY['queen.log_segments', 'queen.log_dedup']) o))
                 FROM unnest(ARRAY['queen.log_partitions', 'queen.log_consumers', 'queen.log_cursor_keys']::regclass[]) t"
}

# ---- step 1: the template of P idle lanes
make_template() {  # db P
    local db=$1 p=$2 t0
    t0=$(date +%s)
    pg_sql postgres "CREATE DATABASE $db" >/dev/null
    pg_sql "$db" "CREATE EXTENSION pg_stat_statements" >/dev/null
    start_broker "$db" sql  # applies the schema
    stop_broker
    pg_sql "$db" "DO \$\$
        DECLARE s integer; m integer;
        BEGIN
            FOR s IN 0..$p - 1 BY $PRECREATE_BATCH LOOP
                m := least($PRECREATE_BATCH, $p - s);
                PERFORM count(*) FROM queen.push(array_fill('$QUEUE'::text, ARRAY[m]),
                    ARRAY(SELECT 'p' || i FROM generate_series(s, s + m - 1) i), array_fill(1, ARRAY[m]),
                    ARRAY(SELECT 'pre-' || i FROM generate_series(s, s + m - 1) i), array_fill(NULL::uuid, ARRAY[m]),
                    array_fill(NULL::text, ARRAY[m]), array_fill('{\"pre\":1}'::text, ARRAY[m]));
                COMMIT;
            END LOOP;
        END \$\$" >/dev/null
    pg_sql "$db" "DO \$\$
        DECLARE n bigint;
        BEGIN
            LOOP
                SELECT count(*) INTO n FROM queen.pop('$QUEUE', NULL, '$GROUP', $PRECREATE_BATCH, $PRECREATE_BATCH,
                                                      true, true, NULL);
                COMMIT;
                EXIT WHEN n = 0;
            END LOOP;
        END \$\$" >/dev/null
    local check
    check=$(pg_sql "$db" "SELECT (SELECT count(*) FROM queen.log_partitions) || ' ' ||
                                 (SELECT count(*) FROM queen.log_consumers WHERE committed = 1 AND consumer_group = '$GROUP') || ' ' ||
                                 (SELECT count(*) FROM queen.log_consumers WHERE ready_at IS NOT NULL)")
    [[ $check == "$p $p 0" ]] || die "template of $p lanes: partitions, drained cursors, ready cursors = $check"
    pg_sql "$db" "VACUUM ANALYZE" >/dev/null
    lane_sizes "$db" "$p" idle >>"$SIZES"
    say "template $db: $p idle lanes in $(($(date +%s) - t0)) s, $(tail -n 1 "$SIZES" | jq '.total / .partitions | round') bytes per lane"
}

copy_template() {  # template new_db
    local i
    for i in 1 2 3 4 5; do  # an autovacuum worker in the template makes CREATE DATABASE wait, then fail
        pg_sql postgres "CREATE DATABASE $2 TEMPLATE $1 STRATEGY FILE_COPY" >/dev/null 2>"$WORK/copy.err" && return 0
        sleep 2
    done
    die "CREATE DATABASE $2 TEMPLATE $1: $(cat "$WORK/copy.err")"
}

# ---- step 2: one row
STATEMENTS_SQL="SELECT CASE WHEN query ~ 'FROM queen\\.pop(_fused)?\\(' THEN 'pop'
                            WHEN query ~ 'FROM queen\\.ack(_fused)?\\(' THEN 'ack'
                            WHEN query ~ 'FROM queen\\.push\\(' THEN 'push' ELSE 'other' END AS op,
                       sum(calls) AS calls, round(sum(total_exec_time)::numeric, 3) AS ms
                  FROM pg_stat_statements
                 WHERE toplevel AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                 GROUP BY 1"
failed=0
run_row() {  # db path P K [RATE]
    local db=$1 path=$2 p=$3 k=$4 rate=${5:-0} label="$2 P=$3 partitions=$4" messages=$MESSAGES
    local paced=() suffix=$path-P$p-k$k
    if ((rate > 0)); then
        label="$label rate=$rate"
        messages=$RATE_MESSAGES
        paced=(--rate "$rate")
        suffix=$suffix-rate$rate
    fi
    local want=sql
    [[ $path == ext ]] && { pg_sql "$db" "CREATE EXTENSION queen_ext" >/dev/null; want=queen_ext; }
    start_broker "$db" "$want"
    sleep 1  # backends of the start-up reaped before the first reading
    pg_sql "$db" "SELECT pg_stat_statements_reset()" >/dev/null
    local pm p0 b0 m0 wal0 p1 b1 m1
    pm=$(pg_postmaster_pid)
    p0=$(postgres_ticks "$pm"); b0=$(proc_ticks "$BROKER_PID"); m0=$(machine_ticks)
    wal0=$(pg_sql "$db" "SELECT pg_current_wal_lsn()")
    local out=$WORK/bench-$db.json rc=0
    "$QUEEN_BENCH" --url "$URL" --quiet --mode both --queue "$QUEUE" --messages "$messages" --partitions "$p" "${paced[@]}" \
        --pop-partitions "$k" --connections "$CONNECTIONS" --push-batch "$PUSH_BATCH" --pop-batch "$POP_BATCH" \
        --payload-bytes "$PAYLOAD_BYTES" --max-seconds "$MAX_SECONDS" --label "$label" --json-out "$out" \
        >"$WORK/bench-$db.txt" 2>&1 &
    BENCH_PID=$!
    wait "$BENCH_PID" || rc=$?
    BENCH_PID=""
    b1=$(proc_ticks "$BROKER_PID")
    sleep 1
    p1=$(postgres_ticks "$pm"); m1=$(machine_ticks)
    local stmts sizes wal
    stmts=$(pg_sql "$db" "SELECT json_object_agg(op, json_build_object('calls', calls, 'ms', ms)) FROM ($STATEMENTS_SQL) s")
    wal=$(pg_sql "$db" "SELECT pg_current_wal_lsn() - '$wal0'::pg_lsn")
    sizes=$(lane_sizes "$db" "$p" "after run")
    pg_sql "$db" "SELECT calls, round(total_exec_time::numeric) AS total_ms, round(mean_exec_time::numeric, 3) AS mean_ms,
                         rows, toplevel, left(regexp_replace(query, '\s+', ' ', 'g'), 140) AS query
                    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                   ORDER BY total_exec_time DESC LIMIT 20" >"$RESULTS_DIR/statements-$suffix.txt"
    cp "$WORK/bench-$db.txt" "$RESULTS_DIR/queen_bench-$suffix.txt"
    [[ -s $out ]] || { echo "lanes.sh: $label: no result (queen_bench exit $rc):" >&2; tail -5 "$WORK/bench-$db.txt" >&2; }
    local bench='{}'
    [[ -s $out ]] && bench=$(tail -n 1 "$out")
    jq -c -n --argjson b "$bench" --arg path "$path" --argjson p "$p" --argjson k "$k" --argjson n "$messages" \
        --argjson rate "$rate" \
        --argjson rc "$rc" --argjson st "$stmts" --argjson sz "$sizes" --argjson wal "$wal" \
        --argjson pg "$(awk -v a="$p0" -v b="$p1" -v t="$CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / t }')" \
        --argjson br "$(awk -v a="$b0" -v b="$b1" -v t="$CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / t }')" \
        --argjson busy "$(awk -v a="${m0% *}" -v b="${m1% *}" -v t="$CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / t }')" \
        --argjson total "$(awk -v a="${m0#* }" -v b="${m1#* }" -v t="$CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / t }')" \
        '{path: $path, partitions: $p, popLanes: $k, rate: $rate, messages: $n, exitStatus: $rc,
          result: ($b.result // "no result"), throughput: $b.throughput, elapsedSeconds: $b.elapsedSeconds,
          msgsPerPop: $b.consume.avgMessagesPerPop, pops: $b.consume.pops, emptyPops: $b.consume.emptyPops,
          ackRequests: $b.consume.ackRequests, verification: $b.verification,
          statements: ($st + {pop: ($st.pop // {calls: 0, ms: 0}), ack: ($st.ack // {calls: 0, ms: 0})}),
          cpuSeconds: {postgres: $pg, broker: $br, client: $b.clientCpuSeconds, machineBusy: $busy, machineTotal: $total},
          walBytesPerMessage: (($wal / $n) | round), sizesAfter: $sz, latencyMs: $b.latencyMs,
          conditionLine: $b.conditionLine}' >>"$RESULTS"
    [[ $rc == 0 ]] || failed=1
    stop_broker
    say "$label: $(tail -n 1 "$RESULTS" | jq -r '"\(.throughput.endToEnd // 0 | round) msgs/s e2e, \(.msgsPerPop // 0 | . * 10 | round / 10) msgs/pop, dup/gaps/order \(.verification.duplicates)/\(.verification.missing)/\(.verification.orderViolations), \(.result), \(.elapsedSeconds // 0 | round) s"')"
}

# The top N functions of a callgrind part (inclusive: yes|no), without the frames above the
# statement (process start, PostgresMain), the binaries' paths shortened. postgres is stripped:
# a static function shows as its address, labelled with its heaviest caller.
cg_top() {  # file inclusive n
    local callers
    callers=$(callgrind_annotate --tree=caller --threshold=100 "$1" 2>/dev/null | awk '
        /^$/ { caller = ""; next }
        / < / && caller == "" { c = $0; sub(/.*< +/, "", c); sub(/ \([0-9,]+x\).*/, "", c); sub(/^.*:/, "", c); caller = c; next }
        /\*  / { f = $0; sub(/.*\*  +/, "", f); sub(/ \[.*/, "", f); sub(/^.*:/, "", f)
                 if (f ~ /^0x[0-9a-f]+$/ && caller != "") print f, caller }')
    callgrind_annotate --inclusive="$2" --threshold=100 "$1" 2>/dev/null |
        awk '/file:function/ { f = 1; getline; next } f && NF' |
        grep -vE '(__libc_start_main|\(below main\)|:main |PostgresSingleUserMain|PostgresMain|ld-linux)' |
        sed -E 's/\?\?\?://; s/ \[[^]]*\/bin\/postgres\]//; s/ \[([^]]*\/)?([^]\/]*)\]$/ [\2]/' |
        awk -v map="$callers" 'BEGIN { n = split(map, l, "\n"); for (i = 1; i <= n; i++) { split(l[i], kv, " "); by[kv[1]] = kv[2] } }
            { if (match($0, /0x[0-9a-f]+/)) { a = substr($0, RSTART, RLENGTH); if (a in by) $0 = $0 " (called from " by[a] ")" } print }' |
        head -n "$3" || true
}

# The inclusive Ir of named stages of a statement: parsing, planning, executor start-up and
# run, SPI, B-tree descents and inserts, heap writes, WAL, commit, queen_ext's functions.
cg_stages() {  # file
    callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
        awk '/file:function/ { f = 1; getline; next } f && NF' | sed -E 's/\?\?\?://; s/ \[.*//; s/^( *[0-9,]+ \( *[0-9.]+%\))  .*:/\1  /' |
        grep -E '  (raw_parser|parse_analyze_fixedparams|pg_analyze_and_rewrite_fixedparams|GetCachedPlan|pg_plan_query|ExecutorStart|ExecutorRun|standard_ExecutorEnd|SPI_execute_plan_with_paramlist|SPI_execute_plan_extended|SPI_execute_plan|SPI_cursor_open_with_paramlist|_bt_search|_bt_first|btinsert|heap_update|heap_insert|heapam_index_fetch_tuple|XLogInsert|CommitTransactionCommand|queen_ext_[a-z_]+)$' || true
}

# ---- step 3: one one-lane claim and one ack under callgrind, in database $1 (broker stopped)
profile_ops() {  # db path P
    local db=$1 path=$2 p=$3 w=$CALLGRIND_WARMUP dir=$WORK/cg-$2 j
    mkdir -p "$dir"
    # W+1 idle lanes, one message each, pushed one after another: claims take them in this order.
    local -a names ids
    for ((j = 0; j <= w; j++)); do
        names[j]="p$((p - 1 - j))"
        pg_sql "$db" "SELECT count(*) FROM queen.push(ARRAY['$QUEUE'], ARRAY['${names[j]}'], ARRAY[1], ARRAY['cg-$j'],
                      ARRAY[NULL]::uuid[], ARRAY[NULL]::text[], ARRAY['{\"cg\":$j}'])" >/dev/null
        ids[j]=$(pg_sql "$db" "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                               WHERE q.name = '$QUEUE' AND p.name = '${names[j]}'")
    done
    : >"$dir/ops.sql"
    for ((j = 0; j <= w; j++)); do
        # The broker's pops find the group's registration current (seen within 10 s) and so
        # do not call queen.register_group; under valgrind 10 s pass between two claims, so
        # the registration is refreshed right before each one.
        cat >>"$dir/ops.sql" <<SQL
UPDATE queen.consumer_groups SET last_seen_at = now() WHERE queue_name = '$QUEUE' AND consumer_group = '$GROUP'
SELECT request, partition_id, partition_name, span_start, span_end, lease_id IS NOT NULL AS leased FROM queen.pop_fused('$QUEUE', '$GROUP', '{$POP_BATCH}'::int[], '{1}'::int[], false, true, NULL::timestamptz)
SELECT set_config('lanes.lease', (SELECT c.lease_id FROM queen.log_consumers c WHERE c.partition_id = ${ids[j]} AND c.consumer_group = '$GROUP' ORDER BY c.version DESC LIMIT 1)::text, false)
SELECT item, success, msg_offset, noop, lease_released, error FROM queen.ack_fused('$GROUP', '{0}'::int[], ARRAY[${ids[j]}]::bigint[], ARRAY['cg-$j'], ARRAY[NULL]::bigint[], ARRAY[current_setting('lanes.lease')::uuid], ARRAY['completed'], ARRAY[NULL]::text[])
SQL
    done
    pg_stop
    chown -R postgres: "$dir"
    local t0
    t0=$(date +%s)
    (cd "$dir" && as_postgres valgrind --tool=callgrind --dump-before=ReadyForQuery --callgrind-out-file="$dir/cg.out" \
        "$PG_BIN/postgres" --single -D "$PG_DATA" -c shared_preload_libraries= "$db" <"$dir/ops.sql" >"$dir/single.out" 2>"$dir/valgrind.log") ||
        die "postgres --single under callgrind failed: $(tail -5 "$dir/valgrind.log")"
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$WORK/pg/postgres.log" -w -t 120 start >/dev/null
    # Every claim took its lane with one message, every ack succeeded.
    local claimed acked
    claimed=$(grep -o 'partition_name = "[^"]*"' "$dir/single.out" | sed 's/.*"\(.*\)"/\1/' | paste -sd' ' || true)
    acked=$(grep -c 'success = "t"' "$dir/single.out" || true)
    [[ $claimed == "${names[*]}" && $acked == $((w + 1)) ]] ||
        die "callgrind ops: claimed '$claimed' (expected '${names[*]}'), $acked of $((w + 1)) acks succeeded"
    # Part 1 is the start-up; part 1 + i is statement i; pair j is statements 4j+1 (the
    # registration refreshed), 4j+2 (claim), 4j+3 (the lease id into a setting) and 4j+4 (ack).
    local pop_part=$dir/cg.out.$((4 * w + 3)) ack_part=$dir/cg.out.$((4 * w + 5)) f=$RESULTS_DIR/callgrind-$path.txt
    cp "$pop_part" "$RESULTS_DIR/callgrind-$path-claim.out"
    cp "$ack_part" "$RESULTS_DIR/callgrind-$path-ack.out"
    {
        echo "# callgrind, $path path, $p lanes: one one-lane claim (queen.pop_fused, batch $POP_BATCH, partitions=1) and one ack (queen.ack_fused) after $w warm-up pairs, postgres --single"
        echo "claim: $(sed -n 's/^summary: //p' "$pop_part") Ir; ack: $(sed -n 's/^summary: //p' "$ack_part") Ir"
        for part in claim ack; do
            local file=$pop_part
            [[ $part == ack ]] && file=$ack_part
            echo "== $part, stages (inclusive Ir of named functions)"
            cg_stages "$file"
            echo "== $part, exclusive (self) Ir"
            cg_top "$file" no 25
            echo "== $part, inclusive Ir"
            cg_top "$file" yes 40
        done
    } >"$f"
    say "callgrind $path at $p lanes ($(($(date +%s) - t0)) s): $(sed -n 2p "$f")"
}

# ---- the run
T0=$(date +%s)
echo "== machine: $(nproc) cpus, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== source $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'); broker $QUEEN ($(date -u -r "$QUEEN" +%FT%TZ))"
echo "== LANES=\"$LANES\" POP_LANES=\"$POP_LANES\" PATHS=\"$PATHS\" MESSAGES=$MESSAGES; results in $RESULTS_DIR"
pg_start "$WORK/pg"
echo "== PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT (fsync=on, synchronous_commit=on, shared_buffers=512MB)"
for p in $LANES; do
    tmpl=lanes_t$p
    make_template "$tmpl" "$p"
    for path in $PATHS; do
        first_k=1
        for k in $POP_LANES; do
            db=lanes_${path}_${p}_$k
            copy_template "$tmpl" "$db"
            run_row "$db" "$path" "$p" "$k"
            if [[ $CALLGRIND == 1 && $p == "$MAX_P" && $first_k == 1 ]]; then profile_ops "$db" "$path" "$p"; fi
            first_k=0
            pg_sql postgres "DROP DATABASE $db" >/dev/null
        done
        if ((RATE > 0 && p == 100)); then
            db=lanes_${path}_${p}_rate
            copy_template "$tmpl" "$db"
            run_row "$db" "$path" "$p" 1 "$RATE"
            pg_sql postgres "DROP DATABASE $db" >/dev/null
        fi
    done
    if [[ $p == "$MAX_P" ]]; then
        for t in queen.log_partitions queen.log_consumers queen.log_cursor_keys; do pg_sql "$tmpl" "VACUUM FULL $t" >/dev/null; done
        lane_sizes "$tmpl" "$p" compacted >>"$SIZES"
    fi
    pg_sql postgres "DROP DATABASE $tmpl" >/dev/null
done
print_table "$RESULTS_DIR" | tee "$RESULTS_DIR/table.txt"
echo "wall time $(($(date +%s) - T0)) s; raw results: $RESULTS_DIR"
[[ $failed == 0 ]] || die "at least one row failed its checks (queen_bench outputs in $RESULTS_DIR)"
echo "every row passed its checks"
