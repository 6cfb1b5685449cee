#!/usr/bin/env bash
# What the operator's listings cost at scale (issue 13: 100,000 partitions and 1,000 queues):
# a private PostgreSQL 15 (bench/lib/postgres.sh) and a broker on it, QUEUES queues of
# PARTITIONS partitions with one message each, one consumer group registered on every queue
# (a cursor per partition), a third of each queue's partitions consumed, and 24 hours of
# per-minute activity rows: one per (minute, queue) and per (minute, broker) for 2 brokers.
# Then, ROUNDS times each, the stats refresh (POST /api/v1/stats/refresh, its durationMs) and
# the listing, status and analytics routes and the Prometheus scrape (curl's total time);
# prints the median of each and removes everything.
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

echo "== activity: 24 h of per-minute rows for $QUEUES queues and 2 brokers"
pg_sql q "INSERT INTO queen.queue_metrics (minute, queue_name, push_requests, push_messages, pop_messages, ack_requests,
                                          ack_success, pop_lag_sum_ms, pop_lag_count, pop_lag_max_ms, parked_avg)
          SELECT date_trunc('minute', now()) - make_interval(mins => m), 'lq-' || q, 10, 100, 100, 10, 100, 5000, 100, 90, 1
            FROM generate_series(1, 1440) m, generate_series(1, $QUEUES) q;
          INSERT INTO queen.broker_metrics (minute, hostname, port, push_requests, push_messages, pop_requests,
                                           pop_messages, ack_requests, ack_messages, ack_success, cpu_user, rss_bytes,
                                           pool_size, pool_idle, pool_active, pool_waiting, loop_lag_ms)
          SELECT date_trunc('minute', now()) - make_interval(mins => m), 'bench', b, 5000, 50000, 5000, 50000, 5000,
                 50000, 50000, ROW(60, 300000, 4000, 6000, 5000)::queen.gauge, ROW(60, 6e9, 1e8, 1e8, 1e8)::queen.gauge,
                 ROW(60, 960, 16, 16, 16)::queen.gauge, ROW(60, 240, 2, 6, 4)::queen.gauge,
                 ROW(60, 720, 10, 14, 12)::queen.gauge, ROW(60, 0, 0, 0, 0)::queen.gauge, ROW(600, 300, 0, 5, 1)::queen.gauge
            FROM generate_series(1, 1440) m, generate_series(1, 2) b;
          ANALYZE queen.queue_metrics; ANALYZE queen.broker_metrics" >/dev/null
DAY_AGO=$(date -u -d '24 hours ago' +%Y-%m-%dT%H:%M:%SZ)

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
echo "route                                                                   median of $ROUNDS"
printf '%-71s %8s ms\n' "POST /api/v1/stats/refresh (durationMs)" "$(printf '%s\n' "${refreshes[@]}" | median)"
for target in "/api/v1/resources/queues?limit=10000" "/api/v1/resources/queues/lq-500" "/api/v1/resources/namespaces" \
              "/api/v1/resources/tasks" "/api/v1/consumer-groups" "/api/v1/consumer-groups/lagging" \
              "/api/v1/consumer-groups/billing" "/api/v1/resources/overview" "/api/v1/status" \
              "/api/v1/status?from=$DAY_AGO" "/api/v1/status?queue=lq-500" "/api/v1/status/queues" \
              "/api/v1/status/queues/lq-500" "/api/v1/status/analytics" "/api/v1/analytics/system-metrics" \
              "/api/v1/analytics/worker-metrics" "/api/v1/analytics/queue-ops" "/api/v1/analytics/queue-ops?from=$DAY_AGO" \
              "/api/v1/analytics/queue-ops?queue=lq-500&from=$DAY_AGO" "/api/v1/analytics/queue-lag" \
              "/api/v1/analytics/postgres-stats"; do
    times=()
    for _ in $(seq 1 "$ROUNDS"); do times+=("$(timed_get "$target")"); done
    printf '%-71s %8.1f ms\n' "GET ${target/$DAY_AGO/-24h}" "$(printf '%s\n' "${times[@]}" | median | awk '{ print $1 * 1000 }')"
done
# The Prometheus scrape, its database part cached for 5 s: cold (the cache expired, one call of
# queen.metrics_scrape) and warm (served from the cache).
cold=() warm=()
for _ in $(seq 1 "$ROUNDS"); do
    sleep 5.2
    cold+=("$(timed_get /metrics/prometheus)")
    warm+=("$(timed_get /metrics/prometheus)")
done
printf '%-71s %8.1f ms\n' "GET /metrics/prometheus (cold: queen.metrics_scrape)" "$(printf '%s\n' "${cold[@]}" | median | awk '{ print $1 * 1000 }')"
printf '%-71s %8.1f ms\n' "GET /metrics/prometheus (warm: cached)" "$(printf '%s\n' "${warm[@]}" | median | awk '{ print $1 * 1000 }')"
echo "scrape: $(grep -vc '^#' "$WORK/body") samples, $(wc -c < "$WORK/body") bytes"
echo "answer sizes: queues $(curl -s "$URL/api/v1/resources/queues?limit=10000" | wc -c) bytes, consumer-groups $(curl -s "$URL/api/v1/consumer-groups" | wc -c) bytes"
