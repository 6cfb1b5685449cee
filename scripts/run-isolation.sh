#!/usr/bin/env bash
# Runs the isolation specs in regress/isolation/ (concurrent sessions, PostgreSQL's
# isolationtester) against a throw-away PostgreSQL 15 that holds the broker's schema.
#
#   bash scripts/run-isolation.sh BUILD_DIR
#
# * Tests: every regress/isolation/specs/*.spec (sorted by name), compared with
#   regress/isolation/expected/<name>.out.
# * Server: initdb into a temporary directory, listening only on a unix socket there; the
#   schema (write_schema, scripts/lib/pg_suite.sh) is loaded into database `isolation_queen`, which the specs
#   use (pg_isolation_regress --use-existing). As root the server runs as `postgres`.
# * Results (regression.diffs, regression.out, results/) are copied to BUILD_DIR/isolation.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/lib/pg_suite.sh
source "$ROOT/scripts/lib/pg_suite.sh"
BUILD_DIR="$(suite_build_dir "${1:?usage: $0 BUILD_DIR}")"

PG_ISOLATION="${PG_ISOLATION:-$PG_PGXS_TEST/isolation/pg_isolation_regress}"
require_pg_tools run-isolation "$PG_ISOLATION" "$PG_BINDIR/postgres" "$PG_BINDIR/initdb" "$PG_BINDIR/pg_ctl" "$PG_BINDIR/psql"

tests=()
while IFS= read -r name; do
  [[ -n "$name" ]] && tests+=("$name")
done < <(for f in "$ROOT"/regress/isolation/specs/*.spec; do [[ -e $f ]] && basename "$f" .spec; done | LC_ALL=C sort)
if ((${#tests[@]} == 0)); then
  echo "run-isolation: no specs in regress/isolation/specs" >&2
  exit 0
fi

as_postgres() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

WORK="$(mktemp -d /tmp/queen-isolation.XXXXXX)"
DATA="$WORK/data"
cleanup() {
  if [[ -f "$DATA/postmaster.pid" ]]; then
    as_postgres "$PG_BINDIR/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/in" "$WORK/out"
cp -r "$ROOT/regress/isolation/specs" "$ROOT/regress/isolation/expected" "$WORK/in/"
write_schema "$ROOT" "$WORK/schema.sql"
[[ $(id -u) -eq 0 ]] && chown -R postgres: "$WORK"

as_postgres "$PG_BINDIR/initdb" -D "$DATA" -U postgres --auth=trust --encoding=UTF8 --no-locale >"$WORK/initdb.log"
as_postgres "$PG_BINDIR/pg_ctl" -D "$DATA" -l "$WORK/postgres.log" -w -t 60 \
  -o "-c listen_addresses='' -c unix_socket_directories='$WORK' -c port=5432 -c fsync=off" start >/dev/null
PSQL=("$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$WORK" -p 5432 -U postgres)
"${PSQL[@]}" -d postgres -c "CREATE DATABASE isolation_queen" >/dev/null
PGOPTIONS="-c client_min_messages=warning" "${PSQL[@]}" -d isolation_queen -f "$WORK/schema.sql" >/dev/null

echo "run-isolation: ${#tests[@]} spec(s): ${tests[*]}"
status=0
(cd "$WORK/out" && "$PG_ISOLATION" --use-existing --host="$WORK" --port=5432 --user=postgres \
  --dbname=isolation_queen --inputdir="$WORK/in" --outputdir="$WORK/out" "${tests[@]}") || status=$?

out="$BUILD_DIR/isolation"
rm -rf "$out"
mkdir -p "$out"
for f in regression.diffs regression.out results; do
  if [[ -e "$WORK/out/$f" ]]; then cp -r "$WORK/out/$f" "$out/"; fi
done
cp "$WORK/postgres.log" "$out/" 2>/dev/null || true
if ((status != 0)); then
  if [[ -s "$WORK/out/regression.diffs" ]]; then
    echo "run-isolation: FAILED; regression.diffs:" >&2
    cat "$WORK/out/regression.diffs" >&2
  fi
  echo "run-isolation: results kept in $out" >&2
  exit 1
fi
echo "run-isolation: all specs passed"
