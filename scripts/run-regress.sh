#!/usr/bin/env bash
# Runs the pg_regress suite in regress/ against a throw-away PostgreSQL 15 instance.
#
#   bash scripts/run-regress.sh BUILD_DIR
#   REGRESS_TESTS="streams push" bash scripts/run-regress.sh BUILD_DIR    only these tests
#
# * Tests: every regress/sql/*.sql (sorted by name, C collation), compared with
#   regress/expected/<name>.out.
# * Schema: sql/migrations/*.sql then sql/procedures/*.sql, each sorted by name, are
#   concatenated into one file that a generated first test (_load_schema) applies with
#   ECHO off, so its expected output does not depend on the files; any error or warning
#   while loading shows up as a diff of that test. A shard proxy's schema (sql/shards/*.sql and
#   the partition hash) is written beside it for tests that make a proxy database
#   (QUEEN_REGRESS_PROXY_SCHEMA).
# * pg_regress --temp-instance refuses to run as root, so as root the suite runs as the
#   `postgres` user (runuser) in a temporary directory it owns; otherwise directly.
# * Results (regression.diffs, regression.out, results/) are copied to BUILD_DIR/regress.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/lib/pg_suite.sh
source "$ROOT/scripts/lib/pg_suite.sh"
BUILD_DIR="$(suite_build_dir "${1:?usage: $0 BUILD_DIR}")"

PG_REGRESS="${PG_REGRESS:-$PG_PGXS_TEST/regress/pg_regress}"
SETUP_TEST=_load_schema
require_pg_tools run-regress "$PG_REGRESS" "$PG_BINDIR/postgres" "$PG_BINDIR/initdb" "$PG_BINDIR/psql"

shopt -s nullglob
tests=()
while IFS= read -r name; do
  [[ -n "$name" ]] && tests+=("$name")
done < <(for f in "$ROOT"/regress/sql/*.sql; do basename "$f" .sql; done | LC_ALL=C sort)
# REGRESS_TESTS="a b": only these tests (make regress TEST=a); a name that has no file is an error.
if [[ -n "${REGRESS_TESTS:-}" ]]; then
  for t in $REGRESS_TESTS; do
    [[ -f "$ROOT/regress/sql/$t.sql" ]] || { echo "run-regress: no test regress/sql/$t.sql" >&2; exit 2; }
  done
  read -r -a tests <<<"$REGRESS_TESTS"
fi
if ((${#tests[@]} == 0)); then
  echo "run-regress: no tests in regress/sql" >&2
  exit 0
fi
for t in "${tests[@]}"; do
  if [[ "$t" == "$SETUP_TEST" ]]; then
    echo "run-regress: regress/sql/$SETUP_TEST.sql clashes with the generated setup test" >&2
    exit 2
  fi
done

WORK="$(mktemp -d /tmp/queen-regress.XXXXXX)"
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT
mkdir -p "$WORK/sql" "$WORK/expected" "$WORK/results"
cp "$ROOT"/regress/sql/*.sql "$WORK/sql/"
expected_files=("$ROOT"/regress/expected/*)
if ((${#expected_files[@]})); then cp -r "${expected_files[@]}" "$WORK/expected/"; fi
# Anything else a test may read (data files), next to sql/ and expected/.
for d in "$ROOT"/regress/*/; do
  case "$(basename "$d")" in sql | expected | results) ;; *) cp -r "$d" "$WORK/" ;; esac
done

# The schema, exactly as the broker applies it; and a shard proxy's (QUEEN_REGRESS_PROXY_SCHEMA).
schema="$WORK/schema.sql"
write_schema "$ROOT" "$schema"
proxy_schema="$WORK/proxy_schema.sql"
write_proxy_schema "$ROOT" "$proxy_schema"

# pg_regress runs `psql -a -q`: the lines of this file are echoed until ECHO is turned off,
# and the schema itself is applied silently (NOTICEs suppressed), stopping at the first error.
cat >"$WORK/sql/$SETUP_TEST.sql" <<'EOF'
\set ECHO none
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
\getenv schema_file QUEEN_REGRESS_SCHEMA
\i :schema_file
\echo schema loaded
EOF
printf '%s\n' '\set ECHO none' 'schema loaded' >"$WORK/expected/$SETUP_TEST.out"

args=(
  --temp-instance="$WORK/tmp_check"
  --bindir="$PG_BINDIR"
  --inputdir="$WORK"
  --outputdir="$WORK"
  --encoding=UTF8
  --no-locale
  "$SETUP_TEST" "${tests[@]}"
)

echo "run-regress: ${#tests[@]} test(s): ${tests[*]}"
status=0
if [[ $(id -u) -eq 0 ]]; then
  chown -R postgres: "$WORK"
  (cd "$WORK" && runuser -u postgres -- env QUEEN_REGRESS_SCHEMA="$schema" QUEEN_REGRESS_PROXY_SCHEMA="$proxy_schema" \
    "$PG_REGRESS" "${args[@]}") || status=$?
else
  (cd "$WORK" && QUEEN_REGRESS_SCHEMA="$schema" QUEEN_REGRESS_PROXY_SCHEMA="$proxy_schema" "$PG_REGRESS" "${args[@]}") || status=$?
fi

out="$BUILD_DIR/regress"
rm -rf "$out"
mkdir -p "$out"
for f in regression.diffs regression.out results schema.sql log; do
  if [[ -e "$WORK/$f" ]]; then cp -r "$WORK/$f" "$out/"; fi
done
if ((status != 0)); then
  if [[ -s "$WORK/regression.diffs" ]]; then
    echo "run-regress: FAILED; regression.diffs:" >&2
    cat "$WORK/regression.diffs" >&2
  else
    echo "run-regress: pg_regress failed (exit $status); see $out/log" >&2
    for l in "$WORK"/log/*.log; do
      echo "---- $l" >&2
      tail -n 40 "$l" >&2
    done
  fi
  echo "run-regress: results kept in $out (schema.sql is the schema as loaded)" >&2
  exit 1
fi
echo "run-regress: all tests passed"
