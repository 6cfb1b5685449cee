#!/usr/bin/env bash
# What the operator's listings cost at scale (issue 13: 100,000 partitions and 1,000 queues):
# a private PostgreSQL 15 (bench/lib/postgres.sh) and a broker on it, QUEUES queues of
# PARTITIONS partitions with one message each, one consumer group registered on every queue
# (a cursor per partition), a third of each queue's partitions consumed. Then, ROUNDS times
# each, the stats refresh (POST /api/v1/stats/refresh, its durationMs) and the listing routes
# (curl's total time); prints the median of each and removes everything.
#   bash bench/listing_scale.sh [BUILD_DIR]     (default build)
# Environment: QUEUES [1000], PARTITIONS [100], ROUNDS [5].
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
QUEUES=${QUEUES:-1000}
PARTITIONS=${PARTITIONS:-100}
ROUNDS=${ROUNDS:-5}
cd "$ROOT"
source bench/lib/common.sh
source bench/lib/postgres.sh
WORK=$(mktemp -d /tmp/queen-listing.XXXXXX)
BROKER_PID=
cleanup() {
    [[ -n $BROKER_PID ]] && kill "$BROKER_PID" 2>/dev/null && wait "$BROKER_PID" 2>/dev/null
    pg_stop
    rm -rf "$WORK"
}
trap cleanup EXIT
pg_start "$WORK"
pg_sql postgres "CREATE DATABASE q" >/dev/null
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
# No background refresh during the measurement: every refresh below is one of ours.
HOST=127.0.0.1 PORT=$PORT QUEEN_DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_PORT/q" \
    QUEEN_STATS_INTERVAL_MS=86400000 "$BUILD/queen" >"$WORK/broker.log" 2>&1 &
BROKER_PID=$!
for _ in $(seq 1 120); do curl -sf "$URL/health" >/dev/null && break; sleep 0.5; done
curl -sf "$URL/health" >/dev/null || { echo "listing_scale: the broker did not start" >&2; exit 1; }

echo "== filling: $QUEUES queues x $PARTITIONS partitions ($((QUEUES * PARTITIONS)) partitions), one message each"
start=$(date +%s)
pg_sql q "DO \$\$
DECLARE n integer := $PARTITIONS;
BEGIN
    FOR q IN 1..$QUEUES LOOP
        PERFORM queen.configure('lq-' || q, 'ns-' || (q % 10), 'task-' || (q % 7), '{}'::jsonb);
        PERFORM count(*) FROM queen.push(
            array_fill('lq-' || q, ARRAY[n]), ARRAY(SELECT 'p' || i FROM generate_series(1, n) i),
            array_fill(1, ARRAY[n]), ARRAY(SELECT 'lq-' || q || '-' || i FROM generate_series(1, n) i),
            array_fill(NULL::uuid, ARRAY[n]), array_fill(NULL::text, ARRAY[n]),
            ARRAY(SELECT '{\"i\":' || i || '}' FROM generate_series(1, n) i));
        PERFORM count(*) FROM queen.pop('lq-' || q, NULL, 'billing', n / 3, n / 3, true, true, NULL);
    END LOOP;
END \$\$" >/dev/null
echo "filled in $(($(date +%s) - start)) s: $(pg_sql q "SELECT count(*) FROM queen.log_partitions") partitions, $(pg_sql q "SELECT count(*) FROM queen.log_consumers") cursors"

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
timed_get() {  # target -> seconds of one GET (and checks for 200)
    curl -s -o "$WORK/body" -w '%{http_code} %{time_total}\n' "$URL$1" | {
        read -r code t
        [[ $code == 200 ]] || { echo "listing_scale: $1 answered $code: $(head -c 200 "$WORK/body")" >&2; exit 1; }
        echo "$t"
    }
}

refreshes=()
for _ in $(seq 1 "$ROUNDS"); do
    refreshes+=("$(curl -s -X POST "$URL/api/v1/stats/refresh" | jq -r '.durationMs')")
done
echo
echo "route                                               median of $ROUNDS"
printf '%-51s %8s ms\n' "POST /api/v1/stats/refresh (durationMs)" "$(printf '%s\n' "${refreshes[@]}" | median)"
for target in "/api/v1/resources/queues?limit=10000" "/api/v1/resources/queues/lq-500" "/api/v1/resources/namespaces" \
              "/api/v1/resources/tasks" "/api/v1/consumer-groups" "/api/v1/consumer-groups/lagging" \
              "/api/v1/consumer-groups/billing"; do
    times=()
    for _ in $(seq 1 "$ROUNDS"); do times+=("$(timed_get "$target")"); done
    printf '%-51s %8.1f ms\n' "GET $target" "$(printf '%s\n' "${times[@]}" | median | awk '{ print $1 * 1000 }')"
done
echo "answer sizes: queues $(curl -s "$URL/api/v1/resources/queues?limit=10000" | wc -c) bytes, consumer-groups $(curl -s "$URL/api/v1/consumer-groups" | wc -c) bytes"
