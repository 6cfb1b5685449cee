#!/usr/bin/env bash
# Alternating A/B of one bench/run.sh scenario between two broker builds, ROUNDS rounds of one
# run each (A then B), printing each round's msgs/s (push/s for the push scenario, consume/s
# for consume, end to end otherwise) and the ratio B / A, then the median ratio. Both
# directories need a `queen` and a `queen_bench` (a symlink will do).
#   bash bench/ab.sh DIR_A DIR_B
# Environment: ROUNDS [3], SCENARIO [both], and whatever bench/run.sh takes (MESSAGES, ...).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${1:?usage: $0 DIR_A DIR_B}
B=${2:?usage: $0 DIR_A DIR_B}
ROUNDS=${ROUNDS:-3}
SCENARIO=${SCENARIO:-both}
case $SCENARIO in push) COLUMN=3 ;; consume) COLUMN=4 ;; *) COLUMN=5 ;; esac
rate() {  # dir -> the scenario's msgs/s of one run (its column of the summary row)
    SCENARIOS=$SCENARIO RUNS=1 bash "$ROOT/bench/run.sh" "$1" 2>&1 | awk -v s="$SCENARIO" -v c="$COLUMN" '$1 == s && $2 == 1 { v = $c } END { print v }'
}
ratios=()
echo "round  A msgs/s  B msgs/s  B/A"
for round in $(seq 1 "$ROUNDS"); do
    a=$(rate "$A")
    b=$(rate "$B")
    r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (a > 0) ? b / a : 0 }')
    ratios+=("$r")
    printf '%5s  %7s  %7s  %s\n' "$round" "$a" "$b" "$r"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { printf "median B/A: %s\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
