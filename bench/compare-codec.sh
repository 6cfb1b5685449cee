#!/usr/bin/env bash
# Stock codec path vs queen_ext, on the same machine in one invocation.
#
#   bench/compare-codec.sh [BUILD_DIR]        (make bench-codec)
#
# Runs bench/run.sh ROUNDS times with EXTENSION=off and EXTENSION=on alternately (each run a
# fresh embedded PostgreSQL, fsync on, and a fresh broker), the same scenarios and knobs for
# both, then prints per path the medians of: push msgs/s, consume (pop + ack) msgs/s, both
# (end to end) msgs/s, segment bytes stored per message, WAL bytes per message, and
# PostgreSQL CPU µs per message; and the ratio extension / stock of each.
# Needs queen_ext installed (make ext-install), jq and psql.
#
# Each round also runs the headline (both) over WIDE_PARTITIONS partitions with WIDE_MESSAGES
# messages, the partition sweep's wide row, labelled "both P=<n>".
#
# Environment: ROUNDS [3]; SCENARIOS ["push consume both"]; MESSAGES [50000];
# WIDE_PARTITIONS [100000] (empty: no wide row); WIDE_MESSAGES [200000]; every other knob of
# bench/run.sh (PARTITIONS, CONNECTIONS, PUSH_BATCH, POP_BATCH, PAYLOAD_BYTES, …).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR=${1:-build}
ROUNDS=${ROUNDS:-3}
export SCENARIOS=${SCENARIOS:-"push consume both"}
export MESSAGES=${MESSAGES:-50000}
WIDE_PARTITIONS=${WIDE_PARTITIONS-100000}
WIDE_MESSAGES=${WIDE_MESSAGES:-200000}
command -v jq >/dev/null || { echo "compare-codec.sh: jq is needed" >&2; exit 1; }

# KEEP_RESULTS=DIR keeps the JSON lines and logs there (REPORT_ONLY=1 re-prints a kept run).
if [[ -n ${KEEP_RESULTS:-} ]]; then
    OUT=$KEEP_RESULTS
    mkdir -p "$OUT"
else
    OUT=$(mktemp -d /tmp/queen-codec-compare.XXXXXX)
    trap 'rm -rf "$OUT"' EXIT
fi
[[ ${REPORT_ONLY:-0} == 1 ]] && ROUNDS=0
for round in $(seq 1 "$ROUNDS"); do
    for ext in off on; do
        echo "== round $round, EXTENSION=$ext"
        # run.sh starts its RESULTS file afresh: each run has its own, appended to the path's.
        RUNS=1 EXTENSION=$ext RESULTS="$OUT/run-$round-$ext.jsonl" bash "$ROOT/bench/run.sh" "$BUILD_DIR" \
            > "$OUT/run-$round-$ext.log" 2>&1 || { cat "$OUT/run-$round-$ext.log"; exit 1; }
        cat "$OUT/run-$round-$ext.jsonl" >> "$OUT/$ext.jsonl"
        tail -n 8 "$OUT/run-$round-$ext.log"
        [[ -n $WIDE_PARTITIONS ]] || continue
        RUNS=1 EXTENSION=$ext RESULTS="$OUT/run-$round-$ext-wide.jsonl" SCENARIOS=both PARTITIONS=$WIDE_PARTITIONS \
            MESSAGES=$WIDE_MESSAGES LABEL_TAG=" P=$WIDE_PARTITIONS" bash "$ROOT/bench/run.sh" "$BUILD_DIR" \
            > "$OUT/run-$round-$ext-wide.log" 2>&1 || { cat "$OUT/run-$round-$ext-wide.log"; exit 1; }
        cat "$OUT/run-$round-$ext-wide.jsonl" >> "$OUT/$ext.jsonl"
        tail -n 3 "$OUT/run-$round-$ext-wide.log"
    done
done

echo
echo "== stock SQL path vs queen_ext: medians of $ROUNDS round(s); $MESSAGES messages per scenario (the wide row: $WIDE_MESSAGES)"
jq -rs --argjson n "$MESSAGES" '
  def median: map(select(. != null)) | sort | if length == 0 then null
    elif length % 2 == 1 then .[(length - 1) / 2] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def metrics: {
      rate: (if .label | startswith("push") then .throughput.push
             elif .label | startswith("consume") then .throughput.consume else .throughput.endToEnd end),
      seg: .storage.segmentBytesPerMessage, wal: .storage.walBytesPerMessage,
      pgus: (.serverCpuSeconds.postgres * 1000000 / (.conditions.messages // $n)),
      brokerus: (.serverCpuSeconds.broker * 1000000 / (.conditions.messages // $n)) };
  def fmt: if . == null then "-" elif . >= 100 then (round | tostring) else ((. * 100 | round) / 100 | tostring) end;
  def ratio($a; $b): if $a == null or $b == null or $a == 0 then "-" else (($b / $a) * 100 | round) / 100 | tostring end;
  (map(select(.extension == "off")) | group_by(.label | sub(" #[0-9]+$"; ""))) as $off |
  (map(select(.extension == "on")) | group_by(.label | sub(" #[0-9]+$"; ""))) as $on |
  (["scenario", "metric", "stock", "queen_ext", "ext/stock"] | @tsv),
  ( [range(0; $off | length)] | .[] as $i |
    ($off[$i][0].label | sub(" #[0-9]+$"; "")) as $scen |
    ($off[$i] | map(metrics)) as $a | ($on[$i] | map(metrics)) as $b |
    (["msgs/s", "rate"], ["segment bytes/msg", "seg"], ["WAL bytes/msg", "wal"], ["PostgreSQL CPU µs/msg", "pgus"],
     ["broker CPU µs/msg", "brokerus"]) as [$name, $k] |
    ($a | map(.[$k]) | median) as $x | ($b | map(.[$k]) | median) as $y |
    [$scen, $name, ($x | fmt), ($y | fmt), ratio($x; $y)] | @tsv )
' "$OUT/off.jsonl" "$OUT/on.jsonl" | column -t -s $'\t'
echo "conditions: $(tail -n 1 "$OUT/on.jsonl" | jq -r .conditionLine)"
