#!/usr/bin/env bash
# The 100,000-partition drain, as a new user would try it with curl and jq only: push
# MESSAGES messages over PARTITIONS partitions in batches of PUSH_BATCH (message i to
# partition p<i mod PARTITIONS>, transactionId t<i>, payload {"n": i}), then drain the queue
# with CONSUMERS loops side by side, each of queue-wide pops of `partitions=POP_PARTITIONS`
# (100; 1 is Queen's clients' pattern, one lane per pop) and one batch ack per pop, and check
# that every message came exactly once, in offset order within its partition (pops ordered by
# the time their answer arrived), with the payload it was pushed with.
#
#   bench/curl_drain.sh URL        (a running broker, e.g. http://127.0.0.1:6632)
#
# Environment: MESSAGES [200000]; PARTITIONS [100000]; PUSH_BATCH [1000]; POP_BATCH [100];
# POP_PARTITIONS [100]; CONSUMERS [1]; QUEUE [lanes-<random>]; WORK [a temporary directory].
# Exit status 0 only when the drain verified.
set -euo pipefail
URL=${1:?usage: bench/curl_drain.sh URL}
MESSAGES=${MESSAGES:-200000}
PARTITIONS=${PARTITIONS:-100000}
PUSH_BATCH=${PUSH_BATCH:-1000}
POP_BATCH=${POP_BATCH:-100}
POP_PARTITIONS=${POP_PARTITIONS:-100}
CONSUMERS=${CONSUMERS:-1}
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

# drain K: one consumer's loop (curl, one jq, curl per pop: the rest is bash); its deliveries (answer time, partition, offset, transaction
# id, n) in delivered-K.tsv, its pop count in pops-K.
drain() {
    local k=$1 pops=0 empty=0 code at popped
    : >"$WORK/delivered-$k.tsv"
    while ((empty < 3)); do
        code=$(curl -s -o "$WORK/pop-$k.json" -w '%{http_code}' \
            "$URL/api/v1/pop/queue/$QUEUE?batch=$POP_BATCH&partitions=$POP_PARTITIONS")
        at=${EPOCHREALTIME/./}
        if [[ $code == 204 ]]; then
            empty=$((empty + 1))
            sleep 0.2
            continue
        fi
        [[ $code == 200 ]] || { echo "consumer $k: pop answered $code" >&2; return 1; }
        empty=0
        pops=$((pops + 1))
        # One jq: line 1 the ack body, then one line per message for the check.
        jq -r --arg at "$at" '({acknowledgments: [.messages[] | {transactionId, partitionId, leaseId,
                                status: "completed"}]} | tojson),
                              (.messages[] | [$at, .partition, .offset, .transactionId, .data.n] | @tsv)' \
            "$WORK/pop-$k.json" >"$WORK/popped-$k"
        popped=$(<"$WORK/popped-$k")
        printf '%s\n' "${popped%%$'\n'*}" >"$WORK/ack-$k.json"
        [[ $popped == *$'\n'* ]] && printf '%s\n' "${popped#*$'\n'}" >>"$WORK/delivered-$k.tsv"
        curl -sf -X POST -H 'Content-Type: application/json' --data-binary @"$WORK/ack-$k.json" \
            "$URL/api/v1/ack/batch" >"$WORK/acked-$k.json"
        # Every answer succeeded (no "success":false in it): checked without another jq.
        if [[ $(<"$WORK/acked-$k.json") == *'"success":false'* ]]; then
            echo "consumer $k: ack after pop $pops: not every message was acknowledged" >&2
            return 1
        fi
    done
    echo "$pops" >"$WORK/pops-$k"
}
pids=()
for ((k = 1; k <= CONSUMERS; k++)); do
    drain "$k" &
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || { echo "curl_drain.sh: a consumer failed" >&2; exit 1; }; done
pops=$(cat "$WORK"/pops-* | paste -sd+ | bc)
sort -n -k1,1 "$WORK"/delivered-*.tsv | cut -f2- >"$WORK/delivered.tsv"
drained=$(date +%s.%N)

# Verification: each transactionId once, its payload n = its number, its partition
# p<n mod PARTITIONS>, and offsets rising in delivery order within each partition.
read -r delivered unique bad_payload bad_order < <(awk -F'\t' -v parts="$PARTITIONS" '
    { n++; if (!($3 in seen)) u++; seen[$3] = 1
      if ("t" $4 != $3 || "p" ($4 % parts) != $1) bad++
      if (($1 in last) && $2 <= last[$1]) order++; last[$1] = $2 }
    END { print n + 0, u + 0, bad + 0, order + 0 }' "$WORK/delivered.tsv")
seconds=$(echo "$drained - $pushed" | bc)
echo "drained with $pops pops by $CONSUMERS consumer(s) (partitions=$POP_PARTITIONS) in $seconds s," \
     "$(echo "$MESSAGES / $seconds" | bc) msgs/s: delivered $delivered, unique $unique," \
     "missing $((MESSAGES - unique)), duplicates $((delivered - unique)), wrong payload $bad_payload, order violations $bad_order"
[[ $delivered == "$MESSAGES" && $unique == "$MESSAGES" && $bad_payload == 0 && $bad_order == 0 ]] ||
    { echo "curl_drain.sh: NOT verified (work directory $WORK)" >&2; exit 1; }
rm -rf "$WORK"
echo "verified"
