#!/usr/bin/env bash
# The 100,000-partition drain, as a new user would try it with curl and jq only: push
# MESSAGES messages over PARTITIONS partitions in batches of PUSH_BATCH (message i to
# partition p<i mod PARTITIONS>, transactionId t<i>, payload {"n": i}), then drain the queue
# with a loop of queue-wide pops of `partitions=100` and one batch ack per pop, and check
# that every message came exactly once, in offset order within its partition, with the
# payload it was pushed with.
#
#   bench/curl_drain.sh URL        (a running broker, e.g. http://127.0.0.1:6632)
#
# Environment: MESSAGES [200000]; PARTITIONS [100000]; PUSH_BATCH [1000]; POP_BATCH [100];
# POP_PARTITIONS [100]; QUEUE [lanes-<random>]; WORK [a temporary directory].
# Exit status 0 only when the drain verified.
set -euo pipefail
URL=${1:?usage: bench/curl_drain.sh URL}
MESSAGES=${MESSAGES:-200000}
PARTITIONS=${PARTITIONS:-100000}
PUSH_BATCH=${PUSH_BATCH:-1000}
POP_BATCH=${POP_BATCH:-100}
POP_PARTITIONS=${POP_PARTITIONS:-100}
QUEUE=${QUEUE:-lanes-$RANDOM$RANDOM}
WORK=${WORK:-$(mktemp -d /tmp/queen-drain.XXXXXX)}
command -v jq >/dev/null || { echo "curl_drain.sh: jq is needed" >&2; exit 1; }

started=$(date +%s.%N)
for ((start = 0; start < MESSAGES; start += PUSH_BATCH)); do
    end=$((start + PUSH_BATCH < MESSAGES ? start + PUSH_BATCH : MESSAGES))
    jq -nc --arg q "$QUEUE" --argjson s "$start" --argjson e "$end" --argjson p "$PARTITIONS" \
        '{items: [range($s; $e) | {queue: $q, partition: "p\(. % $p)", payload: {n: .}, transactionId: "t\(.)"}]}' \
        >"$WORK/push.json"
    curl -sf -X POST -H 'Content-Type: application/json' --data-binary @"$WORK/push.json" \
        "$URL/api/v1/push" >"$WORK/pushed.json"
    queued=$(jq '[.[] | select(.status == "queued")] | length' "$WORK/pushed.json")
    [[ $queued == $((end - start)) ]] || { echo "push $start..$end: $queued queued" >&2; exit 1; }
done
pushed=$(date +%s.%N)
echo "pushed $MESSAGES messages over $PARTITIONS partitions in $(echo "$pushed - $started" | bc) s"

: >"$WORK/delivered.tsv"
pops=0
empty=0
while ((empty < 3)); do
    code=$(curl -s -o "$WORK/pop.json" -w '%{http_code}' \
        "$URL/api/v1/pop/queue/$QUEUE?batch=$POP_BATCH&partitions=$POP_PARTITIONS")
    if [[ $code == 204 ]]; then
        empty=$((empty + 1))
        sleep 0.2
        continue
    fi
    [[ $code == 200 ]] || { echo "pop answered $code" >&2; exit 1; }
    empty=0
    pops=$((pops + 1))
    jq -r '.messages[] | [.partition, .offset, .transactionId, .data.n] | @tsv' "$WORK/pop.json" >>"$WORK/delivered.tsv"
    jq -c '{acknowledgments: [.messages[] | {transactionId, partitionId, leaseId, status: "completed"}]}' \
        "$WORK/pop.json" >"$WORK/ack.json"
    curl -sf -X POST -H 'Content-Type: application/json' --data-binary @"$WORK/ack.json" \
        "$URL/api/v1/ack/batch" >"$WORK/acked.json"
    failed=$(jq '[.[] | select(.success != true)] | length' "$WORK/acked.json")
    [[ $failed == 0 ]] || { echo "ack after pop $pops: $failed not acknowledged" >&2; exit 1; }
done
drained=$(date +%s.%N)

# Verification: each transactionId once, its payload n = its number, its partition
# p<n mod PARTITIONS>, and offsets rising in delivery order within each partition.
read -r delivered unique bad_payload bad_order < <(awk -F'\t' -v parts="$PARTITIONS" '
    { n++; if (!($3 in seen)) u++; seen[$3] = 1
      if ("t" $4 != $3 || "p" ($4 % parts) != $1) bad++
      if (($1 in last) && $2 <= last[$1]) order++; last[$1] = $2 }
    END { print n + 0, u + 0, bad + 0, order + 0 }' "$WORK/delivered.tsv")
echo "drained with $pops pops in $(echo "$drained - $pushed" | bc) s: delivered $delivered, unique $unique," \
     "missing $((MESSAGES - unique)), duplicates $((delivered - unique)), wrong payload $bad_payload, order violations $bad_order"
[[ $delivered == "$MESSAGES" && $unique == "$MESSAGES" && $bad_payload == 0 && $bad_order == 0 ]] ||
    { echo "curl_drain.sh: NOT verified (work directory $WORK)" >&2; exit 1; }
rm -rf "$WORK"
echo "verified"
