#!/usr/bin/env bash
# Runs every suite of `make test` in order, each to its end even when one fails, and ends
# with one line over all of them: "N passed, N failed" (tests for GoogleTest, pg_regress and
# the dashboard's browser suite, targets for the fuzzers). A suite that exits non-zero
# without reporting a failed test counts one failure. Exit status 1 when anything failed. The
# summary gives each suite's wall time, the build's (LOGS/build.seconds, written by make test)
# and the suites' together.
# The integration suite's two passes (stock, queen_ext) run at once, each cut into
# INTEGRATION_SHARDS GoogleTest shards (default 3: the six processes keep both cores busy;
# docs/testing.md has the measurements). Its tests mostly wait on timers and PostgreSQL, and each
# starts its own cluster and broker on free ports. The sharded suites follow, at once, then the
# failover suite alone.
#   bash scripts/run-tests.sh BUILD_DIR FUZZ_SECONDS [check]
# With `check` (make check), only the inner loop's tier: the structure checks, the unit tests,
# pg_regress, the isolation specs and the integration smoke subset (SMOKE_TESTS below), stock
# and with queen_ext.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${1:?usage: $0 BUILD_DIR FUZZ_SECONDS [check]}"
FUZZ_SECONDS="${2:-60}"
TIER="${3:-all}"
LOGS="$BUILD_DIR/test-logs"
mkdir -p "$LOGS"

total_passed=0
total_failed=0
summary=()
ran_logs=()

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
      # Every run of pg_regress in the log counts: run-isolation.sh runs the specs twice.
      read -r passed failed < <(grep -oE 'All [0-9]+ tests passed|[0-9]+ of [0-9]+ tests failed' "$log" |
        awk '$1 == "All" { p += $2; next } { f += $1; p += $3 - $1 } END { print p + 0, f + 0 }')
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

# tally NAME KIND STATUS SECONDS: adds a finished suite's counts (from LOGS/NAME.log) to the
# totals, and its line (with its wall time) to the summary.
tally() {
  local name=$1 kind=$2 status=$3 seconds=$4 p f
  read -r p f < <(count "$kind" "$LOGS/$name.log" "$status")
  total_passed=$((total_passed + p))
  total_failed=$((total_failed + f))
  ran_logs+=("$LOGS/$name.log")
  summary+=("$(printf '%-22s %5d passed, %d failed  %5d s' "$name" "$p" "$f" "$seconds")")
}

# suite NAME KIND COMMAND...: runs one suite, its output shown and kept in LOGS/NAME.log.
suite() {
  local name=$1 kind=$2 status started=$SECONDS
  shift 2
  echo "==== $name"
  "$@" 2>&1 | tee "$LOGS/$name.log"
  status=${PIPESTATUS[0]}
  tally "$name" "$kind" "$status" $((SECONDS - started))
}

# gtest_shards NAME SHARDS COMMAND...: starts SHARDS shards of a GoogleTest binary in the
# background, as suites NAME-1 … NAME-SHARDS (NAME alone when SHARDS is 1); finish_background
# shows and counts them.
background=()
gtest_shards() {
  local name=$1 shards=$2 i shard
  shift 2
  for ((i = 0; i < shards; i++)); do
    shard=$name
    ((shards > 1)) && shard="$name-$((i + 1))"
    (started=$SECONDS
     GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$@" >"$LOGS/$shard.log" 2>&1
     echo $? >"$LOGS/$shard.status"
     echo $((SECONDS - started)) >"$LOGS/$shard.seconds") &
    background+=("$shard")
  done
}

# finish_background: waits for the suites gtest_shards started, then shows each one's output
# and adds its counts.
finish_background() {
  local shard
  wait
  for shard in "${background[@]}"; do
    echo "==== $shard"
    cat "$LOGS/$shard.log"
    tally "$shard" gtest "$(cat "$LOGS/$shard.status" 2>/dev/null || echo 1)" "$(cat "$LOGS/$shard.seconds" 2>/dev/null || echo 0)"
  done
  background=()
}

# print_summary: the 20 slowest tests (GoogleTest's timings), then the summary; its last line
# is "N passed, N failed" over every suite run.
print_summary() {
  echo "==== slowest tests (scripts/slowest_tests.py)"
  python3 "$ROOT/scripts/slowest_tests.py" 20 "${ran_logs[@]}"
  echo "==== summary (logs in $LOGS)"
  # The build's wall time, when make test recorded it (Makefile, target test).
  if [[ -f $LOGS/build.seconds ]]; then printf '%-22s %28d s\n' build "$(cat "$LOGS/build.seconds")"; fi
  printf '%s\n' "${summary[@]}"
  printf '%-22s %28d s\n' "suites (wall)" "$SECONDS"
  echo "$total_passed passed, $total_failed failed"
}

suite sql-placement check python3 "$ROOT/scripts/check_sql_placement.py" "$ROOT/broker"
suite sql-placement-self check python3 "$ROOT/scripts/check_sql_placement.py" --self-test
suite format check bash "$ROOT/scripts/lint.sh" format
suite shard-routes check python3 "$ROOT/scripts/check_shard_routes.py" "$ROOT"
suite shard-routes-self check python3 "$ROOT/scripts/check_shard_routes.py" --self-test
suite operations check python3 "$ROOT/scripts/check_operations.py" "$ROOT"
suite operations-self check python3 "$ROOT/scripts/check_operations.py" --self-test
suite floors check python3 "$ROOT/scripts/check_floors.py" "$ROOT"
suite floors-self check python3 "$ROOT/scripts/check_floors.py" --self-test
suite doc-references check python3 "$ROOT/scripts/check_doc_references.py" "$ROOT"
suite doc-references-self check python3 "$ROOT/scripts/check_doc_references.py" --self-test
suite slowest-tests-self check python3 "$ROOT/scripts/slowest_tests.py" --self-test
suite unit gtest "$BUILD_DIR/queen_unit_tests"
suite regress pg_regress bash "$ROOT/scripts/run-regress.sh" "$BUILD_DIR"
suite isolation pg_regress bash "$ROOT/scripts/run-isolation.sh" "$BUILD_DIR"
if [[ $TIER == check ]]; then
  # Push and pop with every field, an ack that frees the lease, two groups, a dead letter and
  # its requeue, a long-poll woken by a push.
  SMOKE_TESTS='PushPop.PopReturnsPushedMessagesInOffsetOrderWithEveryField'
  SMOKE_TESTS+=':PushPop.LeasedPartitionIsNotHandedOutAgainAndAckFreesItAtOnce:PushPop.TwoGroupsEachGetEveryMessage'
  SMOKE_TESTS+=':AckRules.AllFailedOnTheThirdDeliveryDeadLettersAll'
  SMOKE_TESTS+=':Dlq.RequeuedMessageIsPoppedAgainWithItsTransactionIdAndPayload'
  SMOKE_TESTS+=':LongPoll.PushOnTheSameBrokerWakesAParkedPop'
  suite integration-smoke gtest "$BUILD_DIR/queen_integration_tests" --gtest_filter="$SMOKE_TESTS"
  suite integration-ext-smoke gtest env QUEEN_TEST_EXTENSION=1 "$BUILD_DIR/queen_integration_tests" \
    --gtest_filter="$SMOKE_TESTS"
  print_summary
  ((total_failed == 0))
  exit
fi
SHARDS="${INTEGRATION_SHARDS:-3}"
echo "==== integration and integration-ext: $SHARDS shards each, at once (output follows when all end)"
gtest_shards integration "$SHARDS" "$BUILD_DIR/queen_integration_tests" --gtest_filter=-Shards*:Failover*:ShardMoves*
gtest_shards integration-ext "$SHARDS" env QUEEN_TEST_EXTENSION=1 "$BUILD_DIR/queen_integration_tests" \
  --gtest_filter=-Shards*:Failover*:ShardMoves*
finish_background
# The sharded deployments, after the passes (beside them they would starve the passes'
# timers), at once: the delivery suites again (push, pop, ack, groups, dead letters,
# transactions, leases, dedup, long-polls, subscriptions, messages, streams, time rules, the
# crash pipeline, encryption, resources, tenancy) through a proxy over four shard databases on
# two clusters (QUEEN_TEST_SHARDED, tests/support/test_env.hpp); the sharded deployment's own
# tests (Shards*); the shard-move tests (ShardMoves*).
SHARDED_SUITES='PushPop.*:AckRules.*:ConsumerGroups.*:Dlq.*:Transaction.*:LeaseExtend.*:Dedup.*:LongPoll.*'
SHARDED_SUITES+=':Subscription.*:Messages.*:Streams.*:TimeBased.*:BackPressure.*:Ordering.*:Pipeline.*:Traces.*'
SHARDED_SUITES+=':Encryption.*:Resources.*:TenantLimits.*:Tenancy*'
echo "==== integration-sharded, integration-shards (2 shards each), integration-moves: at once (output follows when all end)"
gtest_shards integration-sharded 2 env QUEEN_TEST_SHARDED=1 "$BUILD_DIR/queen_integration_tests" \
  --gtest_filter="$SHARDED_SUITES"
gtest_shards integration-shards 2 "$BUILD_DIR/queen_integration_tests" --gtest_filter=Shards*
gtest_shards integration-moves 1 "$BUILD_DIR/queen_integration_tests" --gtest_filter=ShardMoves*
finish_background
# The failover tests (a pg_auto_failover monitor and two nodes each) alone: their switch-over
# timers are the most sensitive to a busy machine.
suite integration-failover gtest "$BUILD_DIR/queen_integration_tests" --gtest_filter=Failover*
suite browser browser bash "$ROOT/tests/browser/run.sh" "$BUILD_DIR"
suite fuzz fuzz bash "$ROOT/scripts/run-fuzz.sh" "$BUILD_DIR" "$FUZZ_SECONDS"

print_summary
((total_failed == 0))
