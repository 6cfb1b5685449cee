#!/usr/bin/env bash
# Held snapshots (issue 12): the headline load for DURATION minutes with a snapshot holder and
# for DURATION minutes with its matched control, per holder, in one run on one build.
#
#   bench/snapshot.sh [BUILD_DIR]                  (make bench-snapshot DURATION=<minutes>)
#
# Starts a private PostgreSQL 15 primary (bench/lib/postgres.sh: fsync on, synchronous_commit
# on; plus wal_level = replica, max_wal_senders = 10; autovacuum at its defaults). After one
# unmeasured warm-up (warm_up), it runs two phases for every holder, first the holder, then
# its control. Each phase starts from a fresh broker database (DROP DATABASE, CREATE DATABASE,
# CHECKPOINT, a fresh broker that applies the schema at boot), starts the holder or control,
# then runs
#   queen_bench --duration-seconds DURATION*60 --interval-seconds SAMPLE_SECONDS
# with queen_bench's defaults otherwise: --mode both, --partitions 100, --connections 16,
# push and pop batches of 100, explicit acks, dedup on. The producers stop at the deadline and
# the consumers drain the rest (the holder is still held), so every message is verified.
# At every interval end a sampler records, for every table in schema queen, n_live_tup and
# n_dead_tup (pg_stat_user_tables) and the heap, index and total size (pg_relation_size,
# pg_indexes_size, pg_total_relation_size), plus the database size and the oldest xmin held.
#
# Holders (HOLDERS) and their controls, which cost the same CPU but hold no snapshot on the
# broker database:
#   rr       an idle session on the broker database: BEGIN ISOLATION LEVEL REPEATABLE READ;
#            SELECT 1; (psql reading a fifo), held from before the first message to the end of
#            the phase. Control: none.
#   dump     pg_dump of the broker database in a loop, to /dev/null. Control: pg_dump in a loop
#            of a ballast database in the same cluster, filled between the two phases with
#            segment rows copied from the holder phase's broker database until its
#            pg_database_size reaches the mean of the broker database's sizes sampled during
#            the holder phase (the broker database grows during a phase; the ballast does not,
#            so the two loops dump the same amount of data on average).
#   standby  a physical standby (pg_basebackup -R over loopback, its own port) with
#            hot_standby_feedback = on, running one REPEATABLE READ transaction on the broker
#            database that reads queen.log_partitions and then sleeps for the whole phase.
#            Control: the same standby, made afresh, with hot_standby_feedback = off and the
#            same query. There max_standby_streaming_delay (STANDBY_DELAY, 30s as in a default
#            standby) lets replay cancel the query once it has held up replay that long; the
#            query is then started again after 1 s, and the cancellations are counted. Both
#            phases note the CPU-seconds the standby's server used.
#
# The end: per holder a table by minute (control and holder msg/s consumed end to end, their
# ratio, the dead tuples and total size of each hot table in both phases), the medians, the
# slowest holder minute, and issue 12's targets as PASS/FAIL lines (bench/lib/snapshot_report.awk).
# The exit status is 1 only for a broken run (a phase whose queen_bench failed, a holder that
# held nothing, a broker or server that died), never for a missed target.
#
# Environment: DURATION [10] minutes per phase; HOLDERS ["rr dump standby"]; SAMPLE_SECONDS
# [60]; WARMUP [DURATION, at most 6] unmeasured minutes of the same load before the first
# phase (see warm_up); BENCH_ARGS [] extra queen_bench options; STANDBY_DELAY [30s]; RESULTS_DIR [] where the
# raw files (JSON lines, samples, logs) are copied; KEEP [0] keeps the work directory;
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
STANDBY_DELAY=${STANDBY_DELAY:-30s}
RESULTS_DIR=${RESULTS_DIR:-}
KEEP=${KEEP:-0}
RATE_GUESS=${RATE_GUESS:-25000}
BYTES_PER_MESSAGE=${BYTES_PER_MESSAGE:-500}

log() { echo "snapshot.sh: $*" >&2; }
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"  # no NOTICE for DROP ... IF EXISTS
die() { log "$*"; exit 1; }
[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a whole number of minutes, got '$DURATION'"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "WARMUP must be a whole number of minutes, got '$WARMUP'"
for h in $HOLDERS; do [[ $h == rr || $h == dump || $h == standby ]] || die "unknown holder '$h' (rr, dump, standby)"; done
for tool in jq curl awk; do command -v "$tool" >/dev/null || die "$tool is needed"; done
[[ -x $BUILD_DIR/queen && -x $BUILD_DIR/queen_bench ]] || die "build queen and queen_bench in $BUILD_DIR first"
[[ $(id -u) != 0 ]] || id postgres >/dev/null 2>&1 || die "as root the servers run as the user postgres, which does not exist"
source "$ROOT/bench/lib/snapshot_holders.sh"

WORK=$(mktemp -d /tmp/queen-snapshot.XXXXXX)
chmod 755 "$WORK"
BROKER_PID=""
BENCH_PID=""
SAMPLER_PID=""
BROKEN=()
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    [[ -n $SAMPLER_PID ]] && { kill "$SAMPLER_PID" 2>/dev/null || true; wait "$SAMPLER_PID" 2>/dev/null || true; }
    [[ -n $BENCH_PID ]] && { kill -TERM "$BENCH_PID" 2>/dev/null || true; wait "$BENCH_PID" 2>/dev/null || true; }
    broker_stop
    holders_stop
    pg_stop
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

# ---- disk: refuse a run whose largest phase could take more than a third of the free space
# (checked at the start and again before every phase).
check_disk() {
    local free phase standby
    free=$(($(df -Pk "$WORK" | awk 'NR == 2 { print $4 }') * 1024))
    phase=$((DURATION * 60 * RATE_GUESS * BYTES_PER_MESSAGE + 5 * 1073741824))  # data + WAL (max_wal_size 4GB)
    standby=$((2 * phase))                   # the standby holds a copy of both
    [[ " $HOLDERS " == *" dump "* ]] && ((phase * 3 / 2 > standby)) && standby=$((phase * 3 / 2))  # + ballast
    log "disk: $((free / 1073741824)) GB free in $(df -P "$WORK" | awk 'NR == 2 { print $6 }'); a phase needs up to ~$((standby / 1073741824)) GB (estimate)"
    ((standby * 3 <= free)) || die "a phase could take more than a third of the free space; lower DURATION"
}

broker_start() {  # phase dir
    BROKER_PORT=$(free_port)
    PG_HOST=127.0.0.1 PG_PORT=$PG_PORT PG_USER=postgres PG_DB=queen HOST=127.0.0.1 PORT=$BROKER_PORT \
        QUEEN_SPOOL_DIR="$1/spool" "$BUILD_DIR/queen" >"$1/broker.log" 2>&1 &
    BROKER_PID=$!
    for _ in $(seq 1 240); do
        curl -sf "http://127.0.0.1:$BROKER_PORT/health" >/dev/null 2>&1 && return 0
        kill -0 "$BROKER_PID" 2>/dev/null || die "the broker exited (see $1/broker.log)"
        sleep 0.25
    done
    die "the broker did not answer /health within 60 s"
}

broker_stop() {
    [[ -n $BROKER_PID ]] || return 0
    kill -TERM "$BROKER_PID" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$BROKER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$BROKER_PID" 2>/dev/null || true
    wait "$BROKER_PID" 2>/dev/null || true
    BROKER_PID=""
}

# One sample of the broker database: tables.tsv (phase, minute, epoch, table, live and dead
# tuples, heap, index and total bytes, autovacuums) and db.tsv (phase, minute, epoch, database
# bytes, oldest xmin age of a session on it, of a standby's feedback (-1: none), load average).
sample() {  # phase name, minute, phase dir
    local row
    psql_tab queen "SELECT '$1', '$2', extract(epoch FROM now())::bigint, relname, n_live_tup, n_dead_tup,
        pg_relation_size(relid), pg_indexes_size(relid), pg_total_relation_size(relid), autovacuum_count
        FROM pg_stat_user_tables WHERE schemaname = 'queen' ORDER BY relname" >>"$3/tables.tsv" || true
    row=$(psql_tab queen "SELECT '$1', '$2', extract(epoch FROM now())::bigint, pg_database_size('queen'),
        coalesce((SELECT max(age(backend_xmin)) FROM pg_stat_activity WHERE datname = 'queen'), 0),
        coalesce((SELECT max(age(backend_xmin)) FROM pg_stat_replication), -1)") &&
        printf '%s\t%s\n' "$row" "$(cut -d' ' -f1 /proc/loadavg)" >>"$3/db.tsv" || true
}

# Samples once now (minute 0), then at each interval record queen_bench writes, until it ends.
sampler() {  # phase name, phase dir
    local minute=0 n running=1
    sample "$1" 0 "$2"
    while ((running)); do
        kill -0 "$BENCH_PID" 2>/dev/null || running=0
        n=$(grep '"type":"interval"' "$2/bench.jsonl" 2>/dev/null | grep -vc '"conditionLine"' || true)  # not the result
        while ((minute < ${n:-0})); do
            minute=$((minute + 1))
            sample "$1" "$minute" "$2"
        done
        ((running == 0)) || sleep 1
    done
}

# "LSN<TAB>segment files in pg_wal" of the primary now.
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

holder_start() {  # holder, role (holder|control), phase dir
    case "$1/$2" in
        rr/holder) rr_start "$3" ;;
        rr/control) log "control: no holder" ;;
        dump/holder) dump_start queen "$3" ;;
        dump/control) dump_start ballast "$3" ;;
        standby/holder) standby_start on && standby_query_start "$3" on ;;
        standby/control) standby_start off && standby_query_start "$3" off ;;
    esac
}

# Whether the holder held something, one line for the phase's notes.
holder_note() {  # holder, role, phase dir
    case "$1" in
        dump) dump_summary "$3" ;;
        standby) echo "the standby's query was cancelled by replay $(grep -c . "$3/standby.tsv" 2>/dev/null || echo 0) times; $(standby_cpu_note)" ;;
        rr) [[ $2 == holder ]] && echo "REPEATABLE READ session held, oldest xmin age at the end $(tail -n 1 "$3/db.tsv" | cut -f5)" || echo "no holder" ;;
    esac
}

# The headline load against the running broker for a number of minutes, its output in the dir.
# It execs queen_bench: run it in a subshell or in the background (whose PID is then queen_bench's).
bench_run() {  # dir, label, minutes
    # shellcheck disable=SC2086
    exec "$BUILD_DIR/queen_bench" --url "http://127.0.0.1:$BROKER_PORT" --duration-seconds $(($3 * 60)) \
        --interval-seconds "$SAMPLE_SECONDS" --label "$2" --json --quiet --json-out "$1/bench.jsonl" \
        $BENCH_ARGS >"$1/bench.out" 2>"$1/bench.err"
}

# A fresh, empty broker database, checkpointed so that no phase inherits another's dirty pages.
fresh_database() {
    pg_sql postgres "DROP DATABASE IF EXISTS queen WITH (FORCE)" >/dev/null
    pg_sql postgres "CREATE DATABASE queen" >/dev/null
    pg_sql postgres "CHECKPOINT" >/dev/null
}

# The same load for WARMUP minutes with no holder, measured by nobody. Why: a new cluster has
# one WAL segment file, so the first phase alone would create (zero-fill) every segment file
# the later phases recycle (40 in its first 2 minutes here, one per 16 MB of WAL until the
# first timed checkpoint recycles some), and would start on cold caches. Six minutes cross one
# checkpoint_timeout (5 min), so the pool left behind is the one a phase keeps.
warm_up() {
    local dir=$WORK/warmup wal_at_start
    ((WARMUP > 0)) || return 0
    mkdir -p "$dir"
    log "== warm-up: ${WARMUP} min, not measured"
    fresh_database
    wal_at_start=$(wal_state)
    broker_start "$dir"
    (bench_run "$dir" warmup "$WARMUP") || BROKEN+=("warm-up: queen_bench failed (see $dir/bench.err)")
    broker_stop
    echo "warm-up: ${WARMUP} min, $(wal_note "$wal_at_start")" >>"$WORK/notes.txt"
    tail -n 1 "$WORK/notes.txt" | sed 's/^/snapshot.sh: /' >&2
}

run_phase() {  # holder, role
    local name=$1-$2 dir=$WORK/$1-$2 rc=0 wal_at_start
    mkdir -p "$dir"
    check_disk
    log "== phase $name: ${DURATION} min (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    fresh_database
    wal_at_start=$(wal_state)
    broker_start "$dir"
    holder_start "$1" "$2" "$dir"
    bench_run "$dir" "$name" "$DURATION" &
    BENCH_PID=$!
    sampler "$name" "$dir" &
    SAMPLER_PID=$!
    wait "$BENCH_PID" || rc=$?
    BENCH_PID=""
    wait "$SAMPLER_PID" || true
    SAMPLER_PID=""
    sample "$name" end "$dir"
    echo "$name: $(holder_note "$1" "$2" "$dir")" >>"$WORK/notes.txt"
    echo "$name: $(wal_note "$wal_at_start")" >>"$WORK/notes.txt"
    tail -n 1 "$dir/bench.jsonl" | jq -r --arg n "$name" '"\($n): queen_bench \(.result); \(.duration.messagesSent) messages sent, consumed per interval median \(.duration.consumePerSecond.median // 0 | floor)/s, drain \(.duration.drainSeconds // "unfinished") s; duplicates \(.verification.duplicates), missing \(.verification.missing), order violations \(.verification.orderViolations)"' \
        >>"$WORK/notes.txt" 2>/dev/null || echo "$name: no result from queen_bench" >>"$WORK/notes.txt"
    tail -n 2 "$WORK/notes.txt" | sed 's/^/snapshot.sh: /' >&2
    ((rc == 0)) || BROKEN+=("$name: queen_bench exited $rc (see $dir/bench.err)")
    holders_stop
    broker_stop
    if [[ $1 == dump && $2 == holder ]]; then
        ballast_fill "$(awk -F'\t' '$2 != "end" { s += $4; n++ } END { printf "%d", s / n }' "$dir/db.tsv")"
        echo "ballast: $((BALLAST_BYTES / 1048576)) MB (mean broker database size of $name)" >>"$WORK/notes.txt"
    fi
    [[ $1 == dump && $2 == control ]] && ballast_drop
    return 0
}

check_disk
pg_start "$WORK/pg"
cat >>"$PG_DATA/postgresql.conf" <<CONF
# bench/snapshot.sh: a primary that can feed a standby
wal_level = replica
max_wal_senders = 10
CONF
pg_stop
as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$WORK/pg/postgres.log" -w -t 60 start >/dev/null
PG_VERSION=$(pg_sql postgres "SHOW server_version")
log "PostgreSQL $PG_VERSION on 127.0.0.1:$PG_PORT; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "started $(date -u +%FT%TZ); DURATION=$DURATION min; HOLDERS=$HOLDERS; PostgreSQL $PG_VERSION; $(nproc) CPUs; $(uname -srm)" >"$WORK/notes.txt"

warm_up
for h in $HOLDERS; do
    run_phase "$h" holder
    run_phase "$h" control
done

echo "ended $(date -u +%FT%TZ); load average $(cut -d' ' -f1-3 /proc/loadavg)" >>"$WORK/notes.txt"
for h in $HOLDERS; do
    for role in holder control; do
        jq -r 'select(.type == "interval") | [.label, .index, .consumePerSecond, .pushPerSecond, (if .full then 1 else 0 end), .loadAverage] | @tsv' \
            "$WORK/$h-$role/bench.jsonl"
    done
done >"$WORK/intervals.tsv"
cat "$WORK"/*-*/tables.tsv >"$WORK/tables.tsv"
echo
cat "$WORK/notes.txt"
awk -f "$ROOT/bench/lib/snapshot_report.awk" -v holders="$HOLDERS" -v interval="$SAMPLE_SECONDS" "$WORK/intervals.tsv" "$WORK/tables.tsv" | tee "$WORK/report.txt"
if ((${#BROKEN[@]})); then
    printf 'BROKEN: %s\n' "${BROKEN[@]}"
    exit 1
fi
