# What the PostgreSQL test runners share (sourced by scripts/run-regress.sh and
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
