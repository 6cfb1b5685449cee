#!/usr/bin/env bash
# Held snapshots (issue 12): the headline load with a snapshot holder and with its matched
# control, per holder, in one run on one build, the two interleaved minute by minute.
#
#   bench/snapshot.sh [BUILD_DIR]                  (make bench-snapshot DURATION=<minutes>)
#
# Two private PostgreSQL 15 primaries (bench/lib/postgres.sh: fsync on, synchronous_commit on;
# plus wal_level = replica, max_wal_senders = 10; autovacuum at its defaults): side h for the
# holder, side c for its control, each with its own broker. Why two sides and not two phases
# one after the other: on this shared machine the rate of a load that holds nothing drifts by
# more than 0.2 within ten minutes, and a holder minute compared with a control minute ten
# minutes away measures that drift. Here the sides take turns in slots of SAMPLE_SECONDS in
# the order h c c h h c ... (each goes first in half the pairs), so slot m of the holder and
# slot m of its control run next to each other in time, under the same machine.
#
# Per holder, both sides start from a fresh broker database (DROP DATABASE, CREATE DATABASE,
# CHECKPOINT, a fresh broker that applies the schema at boot), the holder and the control are
# started and held for all slots, then each slot is one
#   queen_bench --queue snapshot --duration-seconds SAMPLE_SECONDS --interval-seconds SAMPLE_SECONDS
# with queen_bench's defaults otherwise: --mode both, --partitions 100, --connections 16, push
# and pop batches of 100, explicit acks, dedup on. Every slot pushes into the same queue and
# the same 100 partitions, so the side's rows (partitions, cursors, their dead versions) carry
# over from slot to slot as in one long run; its producers stop at the slot's end and its
# consumers drain the rest, so every message is verified. A side is idle while the other runs,
# with its holder still held. After each slot, a sample of that side's database records, for
# every table in schema queen, n_live_tup and n_dead_tup (pg_stat_user_tables) and the heap,
# index and total size, plus the database size and the oldest xmin held.
#
# Holders (HOLDERS) and their controls, which cost the same CPU but hold no snapshot on the
# control side's broker database:
#   rr       an idle session on side h's broker database: BEGIN ISOLATION LEVEL REPEATABLE
#            READ; SELECT 1; (psql reading a fifo), held from before the first slot to the
#            end. Control: none.
#   dump     pg_dump of side h's broker database in a loop, to /dev/null, running through the
#            slots of both sides. For the control slots it is pg_dump of another database of
#            the same size (side h's, loaded as much as side c's) that holds no snapshot on
#            side c, at the same CPU cost.
#   standby  for each side a physical standby (pg_basebackup -R over loopback) running one
#            REPEATABLE READ transaction on the broker database that reads
#            queen.log_partitions and then sleeps for the whole run: side h's with
#            hot_standby_feedback = on, side c's with it off. There max_standby_streaming_delay
#            (STANDBY_DELAY, 0) lets replay cancel the query at once; the query is then started
#            again after 1 s, and the cancellations are counted. Why 0 and not a default
#            standby's 30s: the holder's standby replays while its side's load runs, and the
#            control's must too. With 30s the control's replay stops behind its query for up to
#            30 s at a time and catches up in bursts, partly in the holder's slots and partly
#            after the phase; it then used 44 CPU-seconds where the holder's used 53 (with 0:
#            59 and 54; docs/history/held-snapshots.md, "The standby's control"). The notes give the
#            CPU-seconds each standby used.
#   none     nothing on either side: an A/A run, whose ratios are the method's own noise on
#            this machine, to read the holders' against.
#
# The end: per holder a table by minute (control and holder msg/s consumed end to end, their
# ratio, the dead tuples and total size of each hot table on both sides), the medians, the
# slowest holder minute, and issue 12's targets as PASS/FAIL lines (bench/lib/snapshot_report.awk);
# then per holder and slot what else ran beside it (checkpoints, autovacuum runs, the active
# backends' wait events; bench/lib/snapshot_events.awk), to attribute a slow minute;
# then per holder the statements with the most time per 1,000 messages on each side
# (pg_stat_statements, reset when the holder starts; bench/lib/snapshot_statements.awk).
# The exit status is 1 only for a broken run (a slot whose queen_bench failed, a holder that
# held nothing, a broker or server that died), never for a missed target.
#
# WORKLOAD=stream runs the stream workload in every slot instead of the headline load:
# queen_bench --mode stream --partitions STREAM_PARTITIONS (1000) with the same slot options
# (bench/stream_stage.hpp: pop as streams.snapshot, state/get of the batch's keys, one cycle per
# source-partition batch with state ops, sink pushes into snapshot-sink and the ack). Each
# slot registers the same query again (same config hash), so its state and lanes carry over
# from slot to slot like the queue's rows; a slot reads every lane's state before and after
# itself to check the counts. Its report adds, per holder and minute, the cycles/s, messages
# per cycle and cycle and state/get medians of both sides, and queen.stream_state's and
# stream_lanes' dead tuples and sizes; the waits sampler names cycle and state/get backends.
# Unset, the script runs as before.
#
# Environment: DURATION [10] minutes of load per side and holder; HOLDERS ["rr dump standby"]
# (and none); WORKLOAD [] (stream: above) and STREAM_PARTITIONS [1000];
# SAMPLE_SECONDS [60] the slot, a divisor of DURATION x 60; WARMUP [DURATION, at most 6]
# unmeasured minutes of the same alternating load before the first holder, in whole slot
# pairs (rounded up; see warm_up);
# BENCH_ARGS [] extra queen_bench options; STANDBY_DELAY [0]; RESULTS_DIR [] where the raw
# files (JSON lines, samples, logs) are copied; KEEP [0] keeps the work directory;
# RATE_GUESS [25000] msgs/s and BYTES_PER_MESSAGE [500] (database bytes, measured ~450) for the
# disk estimate.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR=$(cd "${1:-build}" && pwd)
source "$ROOT/bench/lib/common.sh"
source "$ROOT/bench/lib/postgres.sh"

DURATION=${DURATION:-10}
HOLDERS=${HOLDERS:-"rr dump standby"}
SAMPLE_SECONDS=${SAMPLE_SECONDS:-60}
WARMUP=${WARMUP:-$((DURATION < 6 ? DURATION : 6))}
BENCH_ARGS=${BENCH_ARGS:-}
STANDBY_DELAY=${STANDBY_DELAY:-0}
RESULTS_DIR=${RESULTS_DIR:-}
KEEP=${KEEP:-0}
RATE_GUESS=${RATE_GUESS:-25000}
BYTES_PER_MESSAGE=${BYTES_PER_MESSAGE:-500}
WORKLOAD=${WORKLOAD:-}
STREAM_PARTITIONS=${STREAM_PARTITIONS:-1000}
WORKLOAD_ARGS=""
WAIT_KINDS=""  # more backend kinds of the waits sampler (a CASE branch ending in a space)

log() { echo "snapshot.sh: $*" >&2; }
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"  # no NOTICE for DROP ... IF EXISTS
die() { log "$*"; exit 1; }
[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a whole number of minutes, got '$DURATION'"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "WARMUP must be a whole number of minutes, got '$WARMUP'"
[[ $SAMPLE_SECONDS =~ ^[1-9][0-9]*$ ]] && ((DURATION * 60 % SAMPLE_SECONDS == 0 && WARMUP * 60 % SAMPLE_SECONDS == 0)) ||
    die "SAMPLE_SECONDS must divide DURATION x 60 and WARMUP x 60, got '$SAMPLE_SECONDS'"
for h in $HOLDERS; do [[ $h == rr || $h == dump || $h == standby || $h == none ]] || die "unknown holder '$h' (rr, dump, standby, none)"; done
case $WORKLOAD in
    "") ;;
    stream)
        [[ $STREAM_PARTITIONS =~ ^[1-9][0-9]*$ ]] || die "STREAM_PARTITIONS must be a whole number, got '$STREAM_PARTITIONS'"
        WORKLOAD_ARGS="--mode stream --partitions $STREAM_PARTITIONS"
        WAIT_KINDS="WHEN query LIKE '%queen.stream_cycle(%' THEN 'cycle' WHEN query LIKE '%queen.stream_state_get(%' THEN 'state/get' "
        ;;
    *) die "unknown WORKLOAD '$WORKLOAD' (unset: the headline load; stream)" ;;
esac
for tool in jq curl awk; do command -v "$tool" >/dev/null || die "$tool is needed"; done
[[ -x $BUILD_DIR/queen && -x $BUILD_DIR/queen_bench ]] || die "build queen and queen_bench in $BUILD_DIR first"
[[ $(id -u) != 0 ]] || id postgres >/dev/null 2>&1 || die "as root the servers run as the user postgres, which does not exist"
SIDE=h
source "$ROOT/bench/lib/snapshot_holders.sh"

SLOTS=$((DURATION * 60 / SAMPLE_SECONDS))
WORK=$(mktemp -d /tmp/queen-snapshot.XXXXXX)
chmod 755 "$WORK"
declare -A SIDE_DATA=() SIDE_PORT=() BROKER_PID=() BROKER_PORT=()
BENCH_PID=""
BROKEN=()
cleanup() {
    local rc=$? s
    trap - EXIT INT TERM
    [[ -n $BENCH_PID ]] && { kill -TERM "$BENCH_PID" 2>/dev/null || true; wait "$BENCH_PID" 2>/dev/null || true; }
    for s in h c; do broker_stop "$s"; done
    holders_stop
    for s in "${!SIDE_DATA[@]}"; do use_side "$s"; pg_stop; done
    [[ -n $RESULTS_DIR ]] && copy_results
    if [[ $KEEP == 1 ]]; then log "work directory kept: $WORK"; else rm -rf "$WORK"; fi
    exit "$rc"
}
# Copies the raw files (JSON lines, samples, notes, logs, error output) to RESULTS_DIR.
copy_results() {
    local f
    mkdir -p "$RESULTS_DIR" || { log "cannot create $RESULTS_DIR"; return 0; }
    (cd "$WORK" && find . -maxdepth 2 -type f \( -name '*.jsonl' -o -name '*.tsv' -o -name '*.txt' -o -name '*.log' \
        -o -name '*.err' -o -name '*.out' \)) | while read -r f; do
        mkdir -p "$RESULTS_DIR/$(dirname "$f")" && cp "$WORK/$f" "$RESULTS_DIR/$f"
    done
    log "raw files copied to $RESULTS_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Makes side h or c current: its primary for pg_sql, psql_tab and the holders, its standby.
use_side() {
    SIDE=$1
    PG_DATA=${SIDE_DATA[$1]}
    PG_PORT=${SIDE_PORT[$1]}
}

# ---- disk: refuse a run whose largest pair could take more than half of the free space
# (checked at the start and again before every holder).
check_disk() {
    local free side need
    free=$(($(df -Pk "$WORK" | awk 'NR == 2 { print $4 }') * 1024))
    side=$((DURATION * 60 * RATE_GUESS * BYTES_PER_MESSAGE + 5 * 1073741824))  # data + WAL (max_wal_size 4GB)
    need=$((2 * side))
    [[ " $HOLDERS " == *" standby "* ]] && need=$((4 * side))  # each side's standby holds a copy
    log "disk: $((free / 1073741824)) GB free in $(df -P "$WORK" | awk 'NR == 2 { print $6 }'); a holder needs up to ~$((need / 1073741824)) GB (estimate)"
    ((need * 2 <= free)) || die "a holder could take more than half of the free space; lower DURATION"
}

# A primary for a side, which can feed a standby.
side_start() {  # side
    pg_start "$WORK/pg-$1"
    cat >>"$PG_DATA/postgresql.conf" <<CONF
# bench/snapshot.sh: a primary that can feed a standby
wal_level = replica
max_wal_senders = 10
# every autovacuum and checkpoint in postgres.log, for the report's events by slot
log_autovacuum_min_duration = 0
log_checkpoints = on
CONF
    pg_stop
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$WORK/pg-$1/postgres.log" -w -t 60 start >/dev/null
    pg_sql postgres "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
    SIDE_DATA[$1]=$PG_DATA
    SIDE_PORT[$1]=$PG_PORT
}

broker_start() {  # side, dir
    local port
    use_side "$1"
    port=$(free_port)
    PG_HOST=127.0.0.1 PG_PORT=$PG_PORT PG_USER=postgres PG_DB=queen HOST=127.0.0.1 PORT=$port \
        QUEEN_SPOOL_DIR="$2/spool" "$BUILD_DIR/queen" >"$2/broker.log" 2>&1 &
    BROKER_PID[$1]=$!
    BROKER_PORT[$1]=$port
    for _ in $(seq 1 240); do
        curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
        kill -0 "${BROKER_PID[$1]}" 2>/dev/null || die "the broker of side $1 exited (see $2/broker.log)"
        sleep 0.25
    done
    die "the broker of side $1 did not answer /health within 60 s"
}

broker_stop() {  # side
    local pid=${BROKER_PID[$1]:-}
    [[ -n $pid ]] || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    BROKER_PID[$1]=""
}

# One sample of the current side's broker database: tables.tsv (phase, minute, epoch, table,
# live and dead tuples, heap, index and total bytes, autovacuums) and db.tsv (phase, minute,
# epoch, database bytes, oldest xmin age of a session on it, of a standby's feedback (-1:
# none), load average).
sample() {  # phase name, minute, phase dir
    local row
    psql_tab queen "SELECT '$1', '$2', extract(epoch FROM now())::bigint, relname, n_live_tup, n_dead_tup,
        pg_relation_size(relid), pg_indexes_size(relid), pg_total_relation_size(relid), autovacuum_count
        FROM pg_stat_user_tables WHERE schemaname = 'queen' ORDER BY relname" >>"$3/tables.tsv" || true
    row=$(psql_tab queen "SELECT '$1', '$2', extract(epoch FROM now())::bigint, pg_database_size('queen'),
        coalesce((SELECT max(age(backend_xmin)) FROM pg_stat_activity WHERE datname = 'queen'), 0),
        coalesce((SELECT max(age(backend_xmin)) FROM pg_stat_replication), -1)") &&
        printf '%s\t%s\n' "$row" "$(cut -d' ' -f1 /proc/loadavg)" >>"$3/db.tsv" || true
    statements_sample "$1" "$2" "$3"
}

# statements.tsv of a phase (phase, minute, calls, total ms, shared blocks hit and read, rows,
# top level (t/f), statement): the 60 statements of the broker database with the most
# execution time since the holder started, cumulative (pg_stat_statements, track = all, so the statements inside the
# queen.* functions too). Minute-to-minute differences show which statement a holder makes
# dearer; the two sides are matched by text, as their query ids differ.
statements_sample() {  # phase name, minute, phase dir
    psql_tab postgres "SELECT '$1', '$2', calls, round(total_exec_time::numeric, 1), shared_blks_hit,
        shared_blks_read, rows, toplevel, left(regexp_replace(query, '\s+', ' ', 'g'), 200)
        FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'queen')
        ORDER BY total_exec_time DESC LIMIT 60" >>"$3/statements.tsv" || true
}

# "LSN<TAB>segment files in pg_wal" of the current side's primary now.
wal_state() { psql_tab postgres "SELECT pg_current_wal_lsn(), (SELECT count(*) FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$')"; }

# "WAL written X MB; pg_wal held N segment files at the start, M at the end" since a wal_state.
wal_note() {  # wal_state at the start
    local lsn0 files0 now lsn1 files1 mb
    IFS=$'\t' read -r lsn0 files0 <<<"$1"
    now=$(wal_state)
    IFS=$'\t' read -r lsn1 files1 <<<"$now"
    mb=$(psql_tab postgres "SELECT round(pg_wal_lsn_diff('$lsn1', '$lsn0') / 1048576)")
    echo "WAL written ${mb} MB; pg_wal held $files0 segment files at the start, $files1 at the end"
}

# Starts a holder and its control, held until holders_stop.
holder_start() {  # holder, holder side's dir, control side's dir
    case "$1" in
        none) log "holder: none; control: none (the difference between the sides is the method's own noise)" ;;
        rr) use_side h && rr_start "$2" && log "control: none" ;;
        dump) use_side h && dump_start queen "$2" && log "control: the same loop, which holds no snapshot on side c" ;;
        standby)
            use_side h && standby_start on && standby_query_start "$2" on
            use_side c && standby_start off && standby_query_start "$3" off ;;
    esac
}

# Whether the holder held something, one line for each side's notes.
holder_note() {  # holder, side, dir
    use_side "$2"
    case "$1/$2" in
        dump/h) dump_summary "$3" ;;
        dump/c) echo "side h's pg_dump loop ran through these slots" ;;
        standby/*) echo "the standby's query was cancelled by replay $(grep -c . "$3/standby.tsv" 2>/dev/null || echo 0) times; $(standby_cpu_note)" ;;
        rr/h) echo "REPEATABLE READ session held, oldest xmin age at the end $(tail -n 1 "$3/db.tsv" | cut -f5)" ;;
        rr/c | none/*) echo "no holder" ;;
    esac
}

# One slot of the headline load against a side's broker, its output in the dir as slot-N.*.
# It execs queen_bench: run it in a subshell or in the background.
bench_run() {  # side, dir, label, slot number, seconds
    # shellcheck disable=SC2086
    exec "$BUILD_DIR/queen_bench" --url "http://127.0.0.1:${BROKER_PORT[$1]}" --queue snapshot --duration-seconds "$5" \
        --interval-seconds "$SAMPLE_SECONDS" --label "$3" --json --quiet --json-out "$2/slot-$4.jsonl" \
        $WORKLOAD_ARGS $BENCH_ARGS >"$2/slot-$4.out" 2>"$2/slot-$4.err"
}

# waits.tsv of a phase while its slot runs (phase, slot, epoch, backend, wait event or CPU,
# blockers, count): the active backends of the side's broker database once a second, through
# one psql session, until killed (its pid is the caller's $!). A backend is push, pop or ack
# by the queen.* function its statement calls, else its kind (autovacuum worker, pg_dump,
# other); blockers are the kinds of the backends a lock wait waits for (pg_blocking_pids),
# "-" when it waits for none.
waits_sampler_start() {  # phase name, slot number, phase dir
    while :; do
        echo "WITH a AS (
            SELECT pid, state, wait_event_type, wait_event,
                   CASE WHEN application_name = 'pg_dump' THEN 'pg_dump'
                        WHEN backend_type <> 'client backend' THEN backend_type
                        WHEN query LIKE '%queen.push(%' THEN 'push' WHEN query LIKE '%queen.pop(%' THEN 'pop'
                        WHEN query LIKE '%queen.ack%' THEN 'ack' ${WAIT_KINDS}ELSE 'other' END AS what
              FROM pg_stat_activity WHERE datname = 'queen' AND pid <> pg_backend_pid())
        SELECT '$1', '$2', extract(epoch FROM now())::bigint, w.what,
               coalesce(w.wait_event_type || ':' || w.wait_event, 'CPU'),
               coalesce(CASE WHEN w.wait_event_type = 'Lock' THEN
                   (SELECT string_agg(DISTINCT coalesce(b.what, 'other'), '+')
                      FROM unnest(pg_blocking_pids(w.pid)) AS bp(pid) LEFT JOIN a b ON b.pid = bp.pid) END, '-'),
               count(*)
          FROM a w WHERE w.state = 'active' GROUP BY 4, 5, 6;"
        sleep 1
    done | "$PG_BIN/psql" -X -q -t -A -F $'\t' "$(pg_conninfo postgres)" >>"$3/waits.tsv" 2>/dev/null &
}

# Runs one slot on a side and samples its database after it; a failed slot is recorded.
# slots.tsv of the phase gets the slot's side, start and end (epochs) and rate.
run_slot() {  # side, dir, phase name, slot number
    local rc=0 t0 waits_pid
    use_side "$1"
    t0=$(date +%s)
    waits_sampler_start "$3" "$4" "$2"
    waits_pid=$!
    bench_run "$1" "$2" "$3" "$4" "$SAMPLE_SECONDS" &
    BENCH_PID=$!
    wait "$BENCH_PID" || rc=$?
    BENCH_PID=""
    kill "$waits_pid" 2>/dev/null || true
    wait "$waits_pid" 2>/dev/null || true
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$3" "$4" "$1" "$t0" "$(date +%s)" \
        "$(jq -r 'select(.type == "interval") | .consumePerSecond' "$2/slot-$4.jsonl" 2>/dev/null | head -n 1)" >>"$2/slots.tsv"
    ((rc == 0)) || BROKEN+=("$3 slot $4: queen_bench exited $rc (see $2/slot-$4.err)")
    kill -0 "${BROKER_PID[$1]}" 2>/dev/null || die "the broker of side $1 died (see $2/broker.log)"
    sample "$3" "$4" "$2"
}

# The sides of slot pair m in the order h c c h h c ...: each side goes first in half the pairs.
pair_order() { (($1 % 2)) && echo "h c" || echo "c h"; }

# A fresh, empty broker database on the current side, checkpointed so that no holder inherits
# another's dirty pages.
fresh_database() {
    pg_sql postgres "DROP DATABASE IF EXISTS queen WITH (FORCE)" >/dev/null
    pg_sql postgres "CREATE DATABASE queen" >/dev/null
    pg_sql postgres "CHECKPOINT" >/dev/null
}

# "queen_bench passed in all N slots; ... messages; duplicates, missing, order violations" of a side.
slots_note() {  # dir
    cat "$1"/slot-*.jsonl 2>/dev/null | jq -rs '[.[] | select(.type != "interval")] as $r |
        "queen_bench \([$r[] | .result] | group_by(.) | map("\(.[0]) in \(length)") | join(", ")) of \($r | length) slots; \([$r[] | .duration.messagesSent] | add) messages sent, drain per slot median \([$r[] | .duration.drainSeconds // 0] | sort | .[length / 2 | floor]) s; duplicates \([$r[] | .verification.duplicates] | add), missing \([$r[] | .verification.missing] | add), order violations \([$r[] | .verification.orderViolations] | add)"' \
        2>/dev/null || echo "no result from queen_bench"
}

# WORKLOAD=stream: "; cycles …, failed …, counts balanced in N of M slots" of a side (else nothing).
stream_note() {  # dir
    [[ $WORKLOAD == stream ]] || return 0
    cat "$1"/slot-*.jsonl 2>/dev/null | jq -rs '[.[] | select(.type != "interval")] as $r |
        "; stream cycles \([$r[] | .stream.cycles] | add), failed cycles \([$r[] | .stream.failedCycles] | add), lost answers \([$r[] | .stream.lostAnswers] | add), counts balanced in \([$r[] | select(.stream.countCheck.balanced)] | length) of \($r | length) slots, source lag 0 after \([$r[] | select(.stream.sourceLagAtEnd == 0)] | length)"' \
        2>/dev/null || echo "; no stream result"
}

# WORKLOAD=stream: per holder and minute, both sides' cycles/s, messages per cycle, cycle and
# state/get medians (from each slot's result), and queen.stream_state's and stream_lanes' dead
# tuples and total size at the end of the minute (from tables.tsv), then the medians.
stream_report() {
    local h role m
    for h in $HOLDERS; do
        for role in holder control; do
            for m in $(seq 1 "$SLOTS"); do
                jq -r --arg p "$h-$role" --arg m "$m" 'select(.type != "interval") | [$p, $m, .throughput.cycles,
                    .throughput.messagesPerCycle, .latencyMs.cycle.p50, .latencyMs.stateGet.p50] | @tsv' \
                    "$WORK/$h-$role/slot-$m.jsonl" 2>/dev/null || true
            done
        done
    done >"$WORK/stream_slots.tsv"
    awk -F'\t' -v holders="$HOLDERS" -v unit="$( ((SAMPLE_SECONDS == 60)) && echo min || echo "#")" '
        function mb(b) { return b == "" ? "-" : sprintf("%.1f", b / 1048576) }
        function n(x) { return x == "" ? "-" : x }
        function median(list,   v, k, i, j, t) {
            k = split(substr(list, 2), v, " ")
            for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return k == 0 ? 0 : (k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2)
        }
        FNR == NR { cyc[$1, $2] = $3; per[$1, $2] = $4; cp[$1, $2] = $5; gp[$1, $2] = $6; if ($2 > last[$1]) last[$1] = $2; next }
        $2 != "end" { dead[$1, $2, $4] = $6; total[$1, $2, $4] = $9 }
        END {
            nh = split(holders, hs, " ")
            for (i = 1; i <= nh; i++) {
                c = hs[i] "-control"; o = hs[i] "-holder"
                printf "\n== %s, the stream workload: cycles/s and msgs per cycle over each slot, cycle and state/get p50 ms; stream tables at the end of the slot: dead tuples control/holder, total MB control/holder\n", hs[i]
                printf "%-4s %13s %6s %11s %13s %15s  %-26s %s\n", unit, "cycles/s c/h", "ratio", "msgs/cyc", "cycle p50", "state/get p50", "stream_state", "stream_lanes"
                lc = ""; lo = ""; pc = ""; po = ""
                for (m = 1; m <= (last[c] > last[o] ? last[c] : last[o]); m++) {
                    printf "%-4s %13s %6s %11s %13s %15s  %-26s %s\n", m,
                        sprintf("%.0f/%.0f", cyc[c, m], cyc[o, m]), (cyc[c, m] > 0 ? sprintf("%.2f", cyc[o, m] / cyc[c, m]) : "-"),
                        sprintf("%.1f/%.1f", per[c, m], per[o, m]), sprintf("%.2f/%.2f", cp[c, m], cp[o, m]),
                        sprintf("%.2f/%.2f", gp[c, m], gp[o, m]),
                        n(dead[c, m, "stream_state"]) "/" n(dead[o, m, "stream_state"]) ", " mb(total[c, m, "stream_state"]) "/" mb(total[o, m, "stream_state"]),
                        n(dead[c, m, "stream_lanes"]) "/" n(dead[o, m, "stream_lanes"]) ", " mb(total[c, m, "stream_lanes"]) "/" mb(total[o, m, "stream_lanes"])
                    if ((c, m) in cyc) { lc = lc " " cyc[c, m]; pc = pc " " cp[c, m] }
                    if ((o, m) in cyc) { lo = lo " " cyc[o, m]; po = po " " cp[o, m] }
                }
                mc = median(lc); mo = median(lo)
                printf "median slot: cycles/s control %.0f, holder %.0f, holder/control %.2f; cycle p50 control %.2f ms, holder %.2f ms\n",
                    mc, mo, (mc > 0 ? mo / mc : 0), median(pc), median(po)
            }
        }' "$WORK/stream_slots.tsv" "$WORK/tables.tsv"
}

# Messages sent (and, verified, consumed) over all slots of a side.
side_messages() {  # dir
    cat "$1"/slot-*.jsonl 2>/dev/null | jq -s '[.[] | select(.type != "interval") | .duration.messagesSent] | add // 0'
}

# The same alternating load for WARMUP minutes with no holder, measured by nobody. Why: a new
# cluster has one WAL segment file, so the first holder alone would create (zero-fill) every
# segment file the later ones recycle (40 in its first 2 minutes here, one per 16 MB of WAL
# until the first timed checkpoint recycles some), and would start on cold caches. Six minutes
# cross one checkpoint_timeout (5 min), so the pool left behind is the one a holder keeps.
warm_up() {
    local s m dir
    ((WARMUP > 0)) || return 0
    log "== warm-up: ${WARMUP} min, the sides taking turns, not measured"
    for s in h c; do
        dir=$WORK/warmup-$s
        mkdir -p "$dir"
        use_side "$s"
        fresh_database
        broker_start "$s" "$dir"
    done
    for m in $(seq 1 $(((WARMUP * 60 / SAMPLE_SECONDS + 1) / 2))); do  # pairs, rounded up
        for s in $(pair_order "$m"); do run_slot "$s" "$WORK/warmup-$s" "warmup-$s" "$m"; done
    done
    for s in h c; do
        broker_stop "$s"
        echo "warm-up $s: ${WARMUP} min in turns; $(slots_note "$WORK/warmup-$s")" >>"$WORK/notes.txt"
    done
    tail -n 2 "$WORK/notes.txt" | sed 's/^/snapshot.sh: /' >&2
}

run_holder() {  # holder
    local h=$1 s m dir
    local -A name=([h]=$1-holder [c]=$1-control) wal_at_start=()
    # The last holder's databases are dropped before the disk check: they are not this one's.
    for s in h c; do use_side "$s"; fresh_database; done
    check_disk
    log "== holder $h: ${DURATION} min per side in $SLOTS slot pairs (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    for s in h c; do
        dir=$WORK/${name[$s]}
        mkdir -p "$dir"
        use_side "$s"
        wal_at_start[$s]=$(wal_state)
        broker_start "$s" "$dir"
    done
    holder_start "$h" "$WORK/${name[h]}" "$WORK/${name[c]}"
    for s in h c; do use_side "$s"; pg_sql postgres "SELECT pg_stat_statements_reset()" >/dev/null; done
    for s in h c; do use_side "$s"; sample "${name[$s]}" 0 "$WORK/${name[$s]}"; done
    for m in $(seq 1 "$SLOTS"); do
        for s in $(pair_order "$m"); do run_slot "$s" "$WORK/${name[$s]}" "${name[$s]}" "$m"; done
    done
    for s in h c; do
        dir=$WORK/${name[$s]}
        use_side "$s"
        sample "${name[$s]}" end "$dir"
        {
            echo "${name[$s]}: $(holder_note "$h" "$s" "$dir")"
            echo "${name[$s]}: $(wal_note "${wal_at_start[$s]}")"
            echo "${name[$s]}: $(slots_note "$dir")$(stream_note "$dir")"
        } >>"$WORK/notes.txt"
    done
    tail -n 6 "$WORK/notes.txt" | sed 's/^/snapshot.sh: /' >&2
    holders_stop
    for s in h c; do broker_stop "$s"; done
}

check_disk
for s in h c; do side_start "$s"; done
use_side h
PG_VERSION=$(pg_sql postgres "SHOW server_version")
log "PostgreSQL $PG_VERSION on 127.0.0.1:${SIDE_PORT[h]} (side h) and :${SIDE_PORT[c]} (side c); $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "started $(date -u +%FT%TZ); DURATION=$DURATION min per side; slots of $SAMPLE_SECONDS s; HOLDERS=$HOLDERS${WORKLOAD:+; WORKLOAD=$WORKLOAD ($WORKLOAD_ARGS)}; PostgreSQL $PG_VERSION; $(nproc) CPUs; $(uname -srm)" >"$WORK/notes.txt"

warm_up
for h in $HOLDERS; do run_holder "$h"; done

echo "ended $(date -u +%FT%TZ); load average $(cut -d' ' -f1-3 /proc/loadavg)" >>"$WORK/notes.txt"
for h in $HOLDERS; do
    for role in holder control; do
        for m in $(seq 1 "$SLOTS"); do
            jq -r --arg m "$m" 'select(.type == "interval") | [.label, ($m | tonumber), .consumePerSecond, .pushPerSecond, (if .full then 1 else 0 end), .loadAverage] | @tsv' \
                "$WORK/$h-$role/slot-$m.jsonl" 2>/dev/null || true
        done
    done
done >"$WORK/intervals.tsv"
cat "$WORK"/*-holder/tables.tsv "$WORK"/*-control/tables.tsv >"$WORK/tables.tsv"
cat "$WORK"/*-holder/slots.tsv "$WORK"/*-control/slots.tsv >"$WORK/slots.tsv" 2>/dev/null || true
cat "$WORK"/*-holder/waits.tsv "$WORK"/*-control/waits.tsv >"$WORK/waits.tsv" 2>/dev/null || true
echo
cat "$WORK/notes.txt"
{
    awk -f "$ROOT/bench/lib/snapshot_report.awk" -v holders="$HOLDERS" -v interval="$SAMPLE_SECONDS" "$WORK/intervals.tsv" "$WORK/tables.tsv"
    [[ $WORKLOAD != stream ]] || stream_report || true
    awk -f "$ROOT/bench/lib/snapshot_events.awk" -v holders="$HOLDERS" "$WORK/slots.tsv" "$WORK/waits.tsv" \
        h=1 "$WORK/pg-h/postgres.log" h=0 "$WORK/pg-c/postgres.log"
    for h in $HOLDERS; do
        awk -f "$ROOT/bench/lib/snapshot_statements.awk" -v holder="$h" \
            -v msgs_h="$(side_messages "$WORK/$h-holder")" -v msgs_c="$(side_messages "$WORK/$h-control")" \
            "$WORK/$h-holder/statements.tsv" "$WORK/$h-control/statements.tsv"
    done
} | tee "$WORK/report.txt"
if ((${#BROKEN[@]})); then
    printf 'BROKEN: %s\n' "${BROKEN[@]}"
    exit 1
fi
