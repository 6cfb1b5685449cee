#!/usr/bin/env bash
# Runs every suite of `make test` in order, each to its end even when one fails, and ends
# with one line over all of them: "N passed, N failed" (tests for GoogleTest, pg_regress and
# the dashboard's browser suite, targets for the fuzzers). A suite that exits non-zero
# without reporting a failed test counts one failure. Exit status 1 when anything failed.
#   bash scripts/run-tests.sh BUILD_DIR FUZZ_SECONDS
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${1:?usage: $0 BUILD_DIR FUZZ_SECONDS}"
FUZZ_SECONDS="${2:-60}"
LOGS="$BUILD_DIR/test-logs"
mkdir -p "$LOGS"

total_passed=0
total_failed=0
summary=()

# count KIND LOG STATUS: prints "passed failed" read from a suite's output.
count() {
  local kind=$1 log=$2 status=$3 passed=0 failed=0 line
  case $kind in
    gtest)
      line=$(grep -E '^\[  PASSED  \] [0-9]+ test' "$log" | tail -n 1)
      [[ -n $line ]] && passed=$(sed -E 's/^\[  PASSED  \] ([0-9]+).*/\1/' <<<"$line")
      line=$(grep -E '^\[  FAILED  \] [0-9]+ test' "$log" | tail -n 1)
      [[ -n $line ]] && failed=$(sed -E 's/^\[  FAILED  \] ([0-9]+).*/\1/' <<<"$line")
      ;;
    pg_regress)
      if line=$(grep -oE 'All [0-9]+ tests passed' "$log" | tail -n 1) && [[ -n $line ]]; then
        passed=$(grep -oE '[0-9]+' <<<"$line")
      elif line=$(grep -oE '[0-9]+ of [0-9]+ tests failed' "$log" | tail -n 1) && [[ -n $line ]]; then
        failed=$(awk '{print $1}' <<<"$line")
        passed=$(($(awk '{print $3}' <<<"$line") - failed))
      fi
      ;;
    check)
      if ((status == 0)); then passed=1; fi
      ;;
    browser)
      line=$(grep -E '^browser: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
      if [[ -n $line ]]; then
        passed=$(awk '{print $2}' <<<"$line")
        failed=$(awk '{print $4}' <<<"$line")
      fi
      ;;
    fuzz)
      line=$(grep -E '^run-fuzz: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
      if [[ -n $line ]]; then
        passed=$(awk '{print $2}' <<<"$line")
        failed=$(awk '{print $4}' <<<"$line")
      fi
      ;;
  esac
  if ((status != 0 && failed == 0)); then failed=1; fi
  echo "$passed $failed"
}

# suite NAME KIND COMMAND...: runs one suite, its output shown and kept in LOGS/NAME.log.
suite() {
  local name=$1 kind=$2 status
  shift 2
  echo "==== $name"
  "$@" 2>&1 | tee "$LOGS/$name.log"
  status=${PIPESTATUS[0]}
  read -r p f < <(count "$kind" "$LOGS/$name.log" "$status")
  total_passed=$((total_passed + p))
  total_failed=$((total_failed + f))
  summary+=("$(printf '%-18s %5d passed, %d failed' "$name" "$p" "$f")")
}

suite sql-placement check python3 "$ROOT/scripts/check_sql_placement.py" "$ROOT/broker"
suite sql-placement-self check python3 "$ROOT/scripts/check_sql_placement.py" --self-test
suite unit gtest "$BUILD_DIR/queen_unit_tests"
suite regress pg_regress bash "$ROOT/scripts/run-regress.sh" "$BUILD_DIR"
suite isolation pg_regress bash "$ROOT/scripts/run-isolation.sh" "$BUILD_DIR"
suite integration gtest "$BUILD_DIR/queen_integration_tests"
suite integration-ext gtest env QUEEN_TEST_EXTENSION=1 "$BUILD_DIR/queen_integration_tests"
suite browser browser bash "$ROOT/tests/browser/run.sh" "$BUILD_DIR"
suite fuzz fuzz bash "$ROOT/scripts/run-fuzz.sh" "$BUILD_DIR" "$FUZZ_SECONDS"

echo "==== summary (logs in $LOGS)"
printf '%s\n' "${summary[@]}"
echo "$total_passed passed, $total_failed failed"
((total_failed == 0))
