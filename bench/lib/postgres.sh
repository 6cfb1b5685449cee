# A private PostgreSQL 15 for benchmarks (sourced): initdb into a directory, start on
# 127.0.0.1 and a free port with fsync and synchronous_commit on, stop. PG_CONF_EXTRA (lines
# of postgresql.conf) is appended for experiments, e.g. PG_CONF_EXTRA='synchronous_commit = off'. As root the server
# runs as `postgres` (PostgreSQL refuses root). Sets PG_BIN, PG_DATA, PG_PORT, PG_SOCK.

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

as_postgres() {
    if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# pg_start DIR: a fresh cluster in DIR/data, socket in DIR/sock, log DIR/postgres.log.
pg_start() {
    local dir=$1
    PG_DATA=$dir/data
    PG_SOCK=$dir/sock
    PG_PORT=$(free_port)
    mkdir -p "$PG_SOCK"
    [[ $(id -u) == 0 ]] && chown -R postgres: "$dir"
    as_postgres "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth=trust --encoding=UTF8 --locale=C >/dev/null
    cat >>"$PG_DATA/postgresql.conf" <<CONF
# bench/lib/postgres.sh: the same server for every system under test
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PG_SOCK'
fsync = on
synchronous_commit = on
full_page_writes = on
max_connections = 300
shared_buffers = 512MB
max_wal_size = 4GB
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
track_functions = all
${PG_CONF_EXTRA:-}
CONF
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$dir/postgres.log" -w -t 60 start >/dev/null
}

pg_stop() {
    [[ -n ${PG_DATA:-} && -f $PG_DATA/postmaster.pid ]] || return 0
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 60 stop >/dev/null 2>&1 ||
        as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -m immediate stop >/dev/null 2>&1 || true
}

pg_postmaster_pid() { head -n 1 "$PG_DATA/postmaster.pid" 2>/dev/null; }

# TCP conninfo of a database of the private server.
pg_conninfo() { echo "host=127.0.0.1 port=$PG_PORT user=postgres dbname=$1"; }

# psql against a database: pg_sql DB "SQL" (unaligned, tuples only, stop on error).
pg_sql() { "$PG_BIN/psql" -X -q -t -A -v ON_ERROR_STOP=1 "$(pg_conninfo "$1")" -c "$2"; }
