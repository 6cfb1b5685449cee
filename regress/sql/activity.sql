-- The per-minute activity tables (sql/procedures/93_activity_metrics.sql) and the status
-- reads over them (94_status.sql, 95_analytics.sql): flushes add up, gauges merge, buckets
-- follow docs/http-api.md "Time windows and counts", and old rows are trimmed.
SET client_min_messages = warning;
\set VERBOSITY terse

-- Bucket widths and starts.
SELECT queen.bucket_minutes(t, t + interval '60 minutes') AS h1, queen.bucket_minutes(t, t + interval '61 minutes') AS h1p,
       queen.bucket_minutes(t, t + interval '6 hours') AS h6, queen.bucket_minutes(t, t + interval '24 hours') AS d1,
       queen.bucket_minutes(t, t + interval '7 days') AS d7, queen.bucket_minutes(t, t + interval '8 days') AS d8
  FROM (SELECT timestamptz '2026-01-01 00:00+00' AS t) x;
SELECT queen.iso_time(queen.bucket_start('2026-01-01 05:07:31+00', 5)) AS five,
       queen.iso_time(queen.bucket_start('2026-01-01 05:07:31+00', 360)) AS six_hours,
       queen.iso_time(queen.bucket_start('2026-01-01 05:07:31+00', 1)) AS one;

-- Gauges merge over samples; a NULL or empty side leaves the other.
SELECT queen.gauge_merge(ROW(2, 10, 4, 6, 6)::queen.gauge, ROW(1, 1, 1, 1, 1)::queen.gauge) AS merged,
       queen.gauge_merge(NULL, ROW(1, 5, 5, 5, 5)::queen.gauge) AS from_null,
       queen.gauge_avg(ROW(4, 10, 1, 4, 2)::queen.gauge) AS avg, queen.gauge_avg(NULL) AS no_sample;

-- Two brokers flush the same minute, one of them twice.
CREATE FUNCTION pg_temp.doc(host text, port int, pushed int, acked int, cpu double precision) RETURNS jsonb
LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'minute', '2026-01-01T10:00:00.000000Z', 'hostname', host, 'port', port,
        'broker', jsonb_build_object(
            'push_requests', 1, 'push_messages', pushed, 'pop_requests', 1, 'pop_messages', 2, 'pop_empty', 0,
            'ack_requests', 1, 'ack_messages', acked, 'ack_success', acked, 'ack_failed', 0,
            'transaction_requests', 0, 'dead_lettered', 0, 'db_calls', 9, 'db_errors', 0,
            'pop_lag_sum_ms', 40, 'pop_lag_count', 2, 'pop_lag_max_ms', 30,
            'cpu_user', jsonb_build_object('n', 1, 'sum', cpu, 'min', cpu, 'max', cpu, 'last', cpu),
            'pool_size', jsonb_build_object('n', 1, 'sum', 4, 'min', 4, 'max', 4, 'last', 4)),
        'queues', jsonb_build_array(jsonb_build_object('queue_name', 'act_q', 'push_requests', 1,
                                                       'push_messages', pushed, 'pop_messages', 2,
                                                       'pop_lag_sum_ms', 40, 'pop_lag_count', 2,
                                                       'pop_lag_max_ms', 30, 'parked_avg', 0.5)))
$$;
SELECT queen.flush_activity(pg_temp.doc('a', 1, 5, 3, 1000));
SELECT queen.flush_activity(pg_temp.doc('a', 1, 2, 1, 3000));
SELECT queen.flush_activity(pg_temp.doc('b', 2, 10, 0, 500));
SELECT hostname, port, push_requests, push_messages, ack_messages, pop_lag_max_ms, cpu_user, pool_size
  FROM queen.broker_metrics ORDER BY hostname;
SELECT queue_name, push_requests, push_messages, pop_messages, pop_lag_sum_ms, pop_lag_count, parked_avg
  FROM queen.queue_metrics;
SELECT queue_name, hostname, port, parked_avg FROM queen.queue_parked_metrics ORDER BY hostname;
SELECT push_requests, push_messages, pop_messages, ack_messages, ack_success FROM queen.metrics_totals;

-- A document without a counter is refused whole (a broker always sends every one).
SELECT queen.flush_activity('{"minute":"2026-01-01T10:01:00Z","hostname":"c","port":3,"broker":{}}');
SELECT count(*) AS rows_of_c FROM queen.broker_metrics WHERE hostname = 'c';

-- The throughput of that minute: counts summed over brokers, gauges averaged over them.
SELECT "timestamp", ingested, processed, "popMessages", "ingestedPerSecond", "avgLagMs", "maxLagMs",
       "queenCpuUserPct", "dbPoolSize"
  FROM queen.status_throughput('2026-01-01 09:30+00', '2026-01-01 10:30+00', NULL, NULL, NULL);
-- A bucket starting before from is not in the answer.
SELECT count(*) AS rows FROM queen.status_throughput('2026-01-01 10:00:01+00', '2026-01-01 10:30+00', NULL, NULL, NULL);
-- Per queue, zero-filled per minute.
SELECT "timestamp", messages
  FROM queen.status_analytics('2026-01-01 09:58+00', '2026-01-01 10:01+00', 'minute', 'act_q', NULL, NULL);
SELECT "queueName", "popCount", "avgLagMs", "maxLagMs", "bucketTime"
  FROM queen.analytics_queue_lag('2026-01-01 09:00+00', '2026-01-01 11:00+00', NULL);
SELECT bucket, "queueName", hostname, "parkedCount"
  FROM queen.analytics_queue_parked('2026-01-01 10:00+00', '2026-01-01 10:30+00', NULL);

-- Retention: rows older than the days given go; this minute's stay.
SELECT queen.flush_activity(jsonb_set(pg_temp.doc('now', 9, 1, 0, 1), '{minute}', to_jsonb(now())));
SELECT queen.trim_activity(1);
SELECT (SELECT count(*) FROM queen.broker_metrics) AS brokers, (SELECT count(*) FROM queen.queue_metrics) AS queues,
       (SELECT count(*) FROM queen.queue_parked_metrics) AS parked;
