# The snapshot holders of bench/snapshot.sh and their controls (sourced, not run). Needs
# bench/lib/common.sh and bench/lib/postgres.sh, and from the caller: WORK, log, die, and
# SIDE (h or c), the side whose primary PG_PORT and PG_DATA name; a standby belongs to a side.
# Every process started here is recorded in HOLD_PIDS and ended by holders_stop.

HOLD_PIDS=()
RR_FD=""
declare -A SB_DATA=() SB_PORT=() SB_SOCK=() SB_CPU_AT_START=()

# psql on the primary, tab-separated, tuples only: psql_tab DB "SQL".
psql_tab() { "$PG_BIN/psql" -X -q -t -A -F $'\t' -v ON_ERROR_STOP=1 "$(pg_conninfo "$1")" -c "$2"; }

# psql on the standby's socket of the current side: sb_sql DB "SQL".
sb_sql() { "$PG_BIN/psql" -X -q -t -A -v ON_ERROR_STOP=1 -h "${SB_SOCK[$SIDE]}" -p "${SB_PORT[$SIDE]}" -U postgres -d "$1" -c "$2"; }

# Waits up to $2 seconds for the command $1 (a shell function name and no arguments) to succeed.
wait_for() {
    local i
    for i in $(seq 1 $(($2 * 4))); do
        "$1" && return 0
        sleep 0.25
    done
    return 1
}

# ---- rr: an idle REPEATABLE READ session on the broker database (psql reading a fifo).
rr_holds() { [[ -n $(psql_tab postgres "SELECT backend_xmin FROM pg_stat_activity WHERE application_name = 'snapshot-rr' AND backend_xmin IS NOT NULL") ]]; }

rr_start() {  # phase dir
    mkfifo "$1/rr.fifo"
    PGAPPNAME=snapshot-rr "$PG_BIN/psql" -X -q "$(pg_conninfo queen)" <"$1/rr.fifo" >"$1/rr.out" 2>&1 &
    HOLD_PIDS+=($!)
    exec {RR_FD}>"$1/rr.fifo"
    echo "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1;" >&"$RR_FD"
    wait_for rr_holds 30 || die "the REPEATABLE READ session holds no snapshot (see $1/rr.out)"
    log "holder: idle REPEATABLE READ session, backend_xmin $(psql_tab postgres "SELECT backend_xmin FROM pg_stat_activity WHERE application_name = 'snapshot-rr'")"
}

# ---- dump: pg_dump of a database in a loop, to /dev/null; each finished dump is a line of dumps.tsv.
dump_start() {  # database, phase dir
    local db=$1 dir=$2 conninfo
    conninfo=$(pg_conninfo "$db")
    (
        child=""
        trap '[[ -n $child ]] && kill "$child" 2>/dev/null; exit 0' TERM
        while :; do
            t0=$(date +%s%N)
            "$PG_BIN/pg_dump" -d "$conninfo" >/dev/null 2>>"$dir/dump.err" &
            child=$!
            rc=0
            wait "$child" || rc=$?
            child=""
            printf '%s\t%s\t%s\n' "$db" "$((($(date +%s%N) - t0) / 1000000))" "$rc" >>"$dir/dumps.tsv"
            [[ $rc == 0 ]] || sleep 1
        done
    ) &
    HOLD_PIDS+=($!)
    log "holder/control: pg_dump of database $db in a loop ($(psql_tab postgres "SELECT pg_size_pretty(pg_database_size('$db'))") now)"
}

# "N dumps of DB, mean X s, longest Y s, Z failed" from a phase's dumps.tsv.
dump_summary() {
    [[ -s $1/dumps.tsv ]] || { echo "no dump finished"; return; }
    awk -F'\t' '{ n++; s += $2; if ($2 > m) m = $2; if ($3 != 0) f++; db = $1 }
        END { printf "%d dumps of %s ended, mean %.1f s, longest %.1f s, %d failed\n", n, db, s / n / 1000, m / 1000, f }' "$1/dumps.tsv"
}

# ---- standby: pg_basebackup -R of the primary on loopback, its own port and socket.
standby_caught_up() { [[ $(sb_sql queen "SELECT to_regclass('queen.log_partitions') IS NOT NULL" 2>/dev/null) == t ]]; }
standby_feeds_back() { [[ -n $(psql_tab postgres "SELECT backend_xmin FROM pg_stat_replication WHERE backend_xmin IS NOT NULL") ]]; }

standby_start() {  # hot_standby_feedback (on|off); a standby of the current side's primary
    local dir=$WORK/standby-$SIDE
    rm -rf "$dir"
    mkdir -p "$dir/sock"
    chown -R postgres: "$dir" 2>/dev/null || true
    SB_DATA[$SIDE]=$dir/data
    SB_SOCK[$SIDE]=$dir/sock
    SB_PORT[$SIDE]=$(free_port)
    as_postgres "$PG_BIN/pg_basebackup" -D "$dir/data" -R -X stream -c fast -h 127.0.0.1 -p "$PG_PORT" -U postgres
    cat >>"$dir/data/postgresql.conf" <<CONF
# bench/snapshot.sh: the standby
port = ${SB_PORT[$SIDE]}
unix_socket_directories = '$dir/sock'
hot_standby = on
hot_standby_feedback = $1
max_standby_streaming_delay = $STANDBY_DELAY
CONF
    as_postgres "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start >/dev/null
    wait_for standby_caught_up 60 || die "the standby has no queen schema after 60 s (see $dir/postgres.log)"
    SB_CPU_AT_START[$SIDE]=$(standby_cpu_seconds)
}

# CPU seconds (user + system) the current side's standby has used: its postmaster, the
# children running now and those it has waited for (postgres_ticks, bench/lib/common.sh).
standby_cpu_seconds() {
    awk -v t="$(postgres_ticks "$(head -n 1 "${SB_DATA[$SIDE]}/postmaster.pid")")" -v tick="$CLK_TCK" \
        'BEGIN { printf "%.1f", t / tick }'
}

# The current side's standby's CPU since it started, for the notes.
standby_cpu_note() {
    awk -v a="${SB_CPU_AT_START[$SIDE]}" -v b="$(standby_cpu_seconds)" \
        'BEGIN { printf "the standby used %.0f CPU-seconds", b - a }'
}

# The standby's long query: a REPEATABLE READ transaction that reads queen.log_partitions and
# sleeps; started again 1 s after it ends (a cancellation by replay: one line of standby.tsv).
standby_query_start() {  # phase dir, feedback
    local dir=$1
    (
        child=""
        trap '[[ -n $child ]] && kill "$child" 2>/dev/null; exit 0' TERM
        while :; do
            "$PG_BIN/psql" -X -q -t -A -h "${SB_SOCK[$SIDE]}" -p "${SB_PORT[$SIDE]}" -U postgres -d queen -c "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM queen.log_partitions; SELECT pg_sleep(864000); COMMIT;" \
                >/dev/null 2>>"$dir/standby-query.err" &
            child=$!
            wait "$child" || true
            child=""
            printf '%s\tended\n' "$(date +%s)" >>"$dir/standby.tsv"  # cancelled: TERM exits above
            sleep 1
        done
    ) &
    HOLD_PIDS+=($!)
    if [[ $2 == on ]]; then
        wait_for standby_feeds_back 30 || die "hot_standby_feedback = on, but the primary sees no xmin from the standby"
        log "holder: standby (port ${SB_PORT[$SIDE]}) with hot_standby_feedback = on, its xmin on the primary $(psql_tab postgres "SELECT backend_xmin FROM pg_stat_replication")"
    else
        log "control: standby (port ${SB_PORT[$SIDE]}) with hot_standby_feedback = off, max_standby_streaming_delay = $STANDBY_DELAY"
    fi
}

standby_stop() {  # standby data directory
    [[ -f $1/postmaster.pid ]] || return 0
    as_postgres "$PG_BIN/pg_ctl" -D "$1" -m fast -w -t 60 stop >/dev/null 2>&1 ||
        as_postgres "$PG_BIN/pg_ctl" -D "$1" -m immediate stop >/dev/null 2>&1 || true
}

# Ends every holder process, closes the rr session and stops and removes both sides' standbys.
holders_stop() {
    local p
    if [[ -n $RR_FD ]]; then
        exec {RR_FD}>&-
        RR_FD=""
    fi
    for p in "${HOLD_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${HOLD_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    HOLD_PIDS=()
    for p in "${!SB_DATA[@]}"; do
        standby_stop "${SB_DATA[$p]}"
        rm -rf "$(dirname "${SB_DATA[$p]}")"
    done
    SB_DATA=() SB_PORT=() SB_SOCK=() SB_CPU_AT_START=()
}
