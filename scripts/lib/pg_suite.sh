# What the PostgreSQL test runners share (sourced by scripts/run-regress.sh, scripts/run-fuzz.sh and
# scripts/run-isolation.sh).

PG_BINDIR="${PG_BINDIR:-/usr/lib/postgresql/15/bin}"
PG_PGXS_TEST="${PG_PGXS_TEST:-/usr/lib/postgresql/15/lib/pgxs/src/test}"

# suite_build_dir DIR: DIR created if needed, printed as an absolute path.
suite_build_dir() {
  mkdir -p "$1"
  (cd "$1" && pwd)
}

# require_pg_tools RUNNER FILE...: exits 2, naming the packages, unless every FILE is executable.
require_pg_tools() {
  local runner=$1 f
  shift
  for f in "$@"; do
    if [[ ! -x "$f" ]]; then
      echo "$runner: $f not found (apt-get install postgresql-15 postgresql-server-dev-15)" >&2
      exit 2
    fi
  done
}

# write_schema ROOT OUT_FILE: the broker's schema as one SQL file, migrations then procedures,
# each sorted by name, exactly as the broker applies them.
write_schema() {
  local root=$1 out=$2 f
  : >"$out"
  while IFS= read -r f; do
    [[ -z "$f" ]] && continue
    {
      printf -- '-- %s\n' "${f#"$root"/}"
      cat "$f"
      # A file whose last statement lacks its semicolon must not run into the next file.
      printf '\n;\n'
    } >>"$out"
  done < <(
    for f in "$root"/sql/migrations/*.sql; do echo "$f"; done | LC_ALL=C sort
    for f in "$root"/sql/procedures/*.sql; do echo "$f"; done | LC_ALL=C sort
  )
}

# write_proxy_schema ROOT OUT_FILE: what `queen shards init` applies to a shard proxy, as one SQL
# file: sql/shards/*.sql sorted by name, then the procedure files it shares with the shards
# (those with the line "-- Applied to a shard proxy too.")
# (run with check_function_bodies off: hand-written bodies call generated functions).
write_proxy_schema() {
  local root=$1 out=$2 f
  : >"$out"
  for f in $(for f in "$root"/sql/shards/*.sql; do echo "$f"; done | LC_ALL=C sort) \
    $(grep -lx -- '-- Applied to a shard proxy too.' "$root"/sql/procedures/*.sql | LC_ALL=C sort); do
    {
      printf -- '-- %s\n' "${f#"$root"/}"
      cat "$f"
      printf '\n;\n'
    } >>"$out"
  done
}

# as_postgres CMD...: CMD, as the postgres user when run as root (initdb and postgres refuse
# root).
as_postgres() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# start_temp_cluster DIR: initdb into DIR/data and start the server, listening only on a unix
# socket in DIR (port 5432; fsync off: throw-away data), log in DIR/postgres.log. DIR must be
# writable by the user the server runs as.
start_temp_cluster() {
  local dir=$1
  as_postgres "$PG_BINDIR/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --no-locale \
    >"$dir/initdb.log" || return 1
  as_postgres "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
    -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c port=5432 -c fsync=off" start >/dev/null
}

# stop_temp_cluster DIR: stops the server start_temp_cluster started in DIR, if it runs.
stop_temp_cluster() {
  local dir=$1
  if [[ -f "$dir/data/postmaster.pid" ]]; then
    as_postgres "$PG_BINDIR/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
}
