#!/usr/bin/env bash
# Runs the isolation specs in regress/isolation/ (concurrent sessions, PostgreSQL's
# isolationtester) against a throw-away PostgreSQL 15 that holds the broker's schema, twice:
# on the stock SQL codec path, then with queen_ext, against the same expected files (the C
# path must behave exactly as the SQL one).
#
#   bash scripts/run-isolation.sh BUILD_DIR
#   ISOLATION_SPECS="pop-race" bash scripts/run-isolation.sh BUILD_DIR    only these specs
#
# * Tests: every regress/isolation/specs/*.spec (sorted by name), compared with
#   regress/isolation/expected/<name>.out. The specs connect to the database that
#   pg_isolation_regress --use-existing --dbname names.
# * Server: initdb into a temporary directory, listening only on a unix socket there. As root
#   the server runs as `postgres`.
# * Pass `isolation`: database `isolation_queen` with the schema (write_schema,
#   scripts/lib/pg_suite.sh). Pass `isolation-ext`: database `isolation_queen_ext` with
#   CREATE EXTENSION queen_ext and then the schema, the order an integration test's database
#   gets them (tests/support/test_cluster.cpp). queen_ext must be installed in
#   PostgreSQL's directories (`make ext-install`); without it that pass fails.
# * Results (regression.diffs, regression.out, results/, postgres.log) are copied to
#   BUILD_DIR/<pass>. Both passes run even when the first fails; exit status 1 if either failed.
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
# ISOLATION_SPECS="a b": only these specs (make isolation SPEC=a); a name without a file is an error.
if [[ -n "${ISOLATION_SPECS:-}" ]]; then
  for t in $ISOLATION_SPECS; do
    [[ -f "$ROOT/regress/isolation/specs/$t.spec" ]] || {
      echo "run-isolation: no spec regress/isolation/specs/$t.spec" >&2
      exit 2
    }
  done
  read -r -a tests <<<"$ISOLATION_SPECS"
fi
if ((${#tests[@]} == 0)); then
  echo "run-isolation: no specs in regress/isolation/specs" >&2
  exit 0
fi

WORK="$(mktemp -d /tmp/queen-isolation.XXXXXX)"
cleanup() {
  stop_temp_cluster "$WORK"
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/in"
cp -r "$ROOT/regress/isolation/specs" "$ROOT/regress/isolation/expected" "$WORK/in/"
write_schema "$ROOT" "$WORK/schema.sql"
[[ $(id -u) -eq 0 ]] && chown -R postgres: "$WORK"

start_temp_cluster "$WORK"
PSQL=("$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$WORK" -p 5432 -U postgres)

# load_schema DB: the broker's schema, applied as the broker applies it.
load_schema() {
  PGOPTIONS="-c client_min_messages=warning" "${PSQL[@]}" -d "$1" -f "$WORK/schema.sql" >/dev/null
}

# run_pass PASS DB: every spec in database DB, results in BUILD_DIR/PASS; returns 1 on failure.
run_pass() {
  local pass=$1 db=$2 status=0
  local dir="$WORK/$pass" out="$BUILD_DIR/$pass" f
  mkdir -p "$dir" "$out"
  echo "run-isolation: $pass: database $db"
  (cd "$dir" && "$PG_ISOLATION" --use-existing --host="$WORK" --port=5432 --user=postgres \
    --dbname="$db" --inputdir="$WORK/in" --outputdir="$dir" "${tests[@]}") || status=$?
  for f in regression.diffs regression.out results; do
    if [[ -e "$dir/$f" ]]; then cp -r "$dir/$f" "$out/"; fi
  done
  cp "$WORK/postgres.log" "$out/" 2>/dev/null || true
  if ((status != 0)); then
    if [[ -s "$dir/regression.diffs" ]]; then
      echo "run-isolation: $pass FAILED; regression.diffs:" >&2
      cat "$dir/regression.diffs" >&2
    fi
    echo "run-isolation: $pass: results kept in $out" >&2
    return 1
  fi
  echo "run-isolation: $pass: all specs passed"
}

# No results of an earlier run stay behind, also for a pass that does not get to run.
rm -rf "$BUILD_DIR/isolation" "$BUILD_DIR/isolation-ext"
echo "run-isolation: ${#tests[@]} spec(s), stock then queen_ext: ${tests[*]}"
status=0

"${PSQL[@]}" -d postgres -c "CREATE DATABASE isolation_queen" >/dev/null
load_schema isolation_queen
run_pass isolation isolation_queen || status=1

"${PSQL[@]}" -d postgres -c "CREATE DATABASE isolation_queen_ext" >/dev/null
if "${PSQL[@]}" -d isolation_queen_ext -c "CREATE EXTENSION queen_ext" >/dev/null; then
  load_schema isolation_queen_ext
  run_pass isolation-ext isolation_queen_ext || status=1
else
  echo "run-isolation: isolation-ext FAILED: CREATE EXTENSION queen_ext failed; install queen_ext" \
    "into PostgreSQL's directories first: make ext-install" >&2
  status=1
fi

if ((status != 0)); then exit 1; fi
echo "run-isolation: all specs passed, stock and with queen_ext"
