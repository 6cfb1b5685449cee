-- /api/v1/analytics/* (docs/status-and-analytics.md),
-- in the conventions of 94_status.sql: column names are the answers' member names, dots
-- nest them. Each reads only the activity tables (cost: window × brokers or window × queues),
-- except postgres-stats, which reads PostgreSQL's statistics views for the queen schema.

-- queen.round2(x): 2 decimals, the precision of every rate and gauge in the answers.
CREATE OR REPLACE FUNCTION queen.round2(p_value double precision)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT round(p_value::numeric, 2) $$;
COMMENT ON FUNCTION queen.round2(double precision) IS 'A double rounded to 2 decimals (NULL stays NULL).';

-- queen.analytics_system_metrics(from, to, hostname): per broker and bucket, oldest first, the
-- process, pool and wait gauges as {avg, min, max, last}. CPU is percent of one core × 100.
CREATE OR REPLACE FUNCTION queen.analytics_system_metrics(p_from timestamptz, p_to timestamptz, p_hostname text)
RETURNS TABLE(hostname text, port integer, "workerId" integer, "timestamp" text, "sampleCount" bigint,
              "metrics.cpu.user_us.avg" numeric, "metrics.cpu.user_us.min" numeric,
              "metrics.cpu.user_us.max" numeric, "metrics.cpu.user_us.last" numeric,
              "metrics.cpu.system_us.avg" numeric, "metrics.cpu.system_us.min" numeric,
              "metrics.cpu.system_us.max" numeric, "metrics.cpu.system_us.last" numeric,
              "metrics.memory.rss_bytes.avg" numeric, "metrics.memory.rss_bytes.min" numeric,
              "metrics.memory.rss_bytes.max" numeric, "metrics.memory.rss_bytes.last" numeric,
              "metrics.memory.virtual_bytes.avg" numeric, "metrics.memory.virtual_bytes.min" numeric,
              "metrics.memory.virtual_bytes.max" numeric, "metrics.memory.virtual_bytes.last" numeric,
              "metrics.database.pool_size.avg" numeric, "metrics.database.pool_size.min" numeric,
              "metrics.database.pool_size.max" numeric, "metrics.database.pool_size.last" numeric,
              "metrics.database.pool_idle.avg" numeric, "metrics.database.pool_idle.min" numeric,
              "metrics.database.pool_idle.max" numeric, "metrics.database.pool_idle.last" numeric,
              "metrics.database.pool_active.avg" numeric, "metrics.database.pool_active.min" numeric,
              "metrics.database.pool_active.max" numeric, "metrics.database.pool_active.last" numeric,
              "metrics.threadpool.db.pool_size.avg" numeric, "metrics.threadpool.db.pool_size.min" numeric,
              "metrics.threadpool.db.pool_size.max" numeric, "metrics.threadpool.db.pool_size.last" numeric,
              "metrics.threadpool.db.queue_size.avg" numeric, "metrics.threadpool.db.queue_size.min" numeric,
              "metrics.threadpool.db.queue_size.max" numeric, "metrics.threadpool.db.queue_size.last" numeric,
              "metrics.threadpool.system.queue_size.avg" numeric, "metrics.threadpool.system.queue_size.min" numeric,
              "metrics.threadpool.system.queue_size.max" numeric, "metrics.threadpool.system.queue_size.last" numeric)
LANGUAGE sql STABLE
AS $$
    WITH w AS (SELECT queen.bucket_minutes(p_from, p_to) AS m),
    per AS (
        SELECT b.hostname, b.port, queen.bucket_start(b.minute, w.m) AS bucket,
               queen.gauge_sum(b.cpu_user ORDER BY b.minute) AS cu, queen.gauge_sum(b.cpu_system ORDER BY b.minute) AS cs,
               queen.gauge_sum(b.rss_bytes ORDER BY b.minute) AS rs, queen.gauge_sum(b.virtual_bytes ORDER BY b.minute) AS vs,
               queen.gauge_sum(b.pool_size ORDER BY b.minute) AS ps, queen.gauge_sum(b.pool_idle ORDER BY b.minute) AS pi,
               queen.gauge_sum(b.pool_active ORDER BY b.minute) AS pa,
               queen.gauge_sum(b.pool_waiting ORDER BY b.minute) AS pw,
               queen.gauge_sum(b.background_jobs ORDER BY b.minute) AS bj
          FROM w, queen.broker_metrics b
         WHERE b.minute >= p_from - make_interval(mins => w.m) AND b.minute <= p_to
           AND (p_hostname IS NULL OR b.hostname = p_hostname)
         GROUP BY b.hostname, b.port, 3
    )
    SELECT p.hostname, p.port, 0, queen.iso_time(p.bucket), coalesce((p.cu).n, 0),
           queen.round2(queen.gauge_avg(p.cu)), queen.round2((p.cu).min), queen.round2((p.cu).max), queen.round2((p.cu).last),
           queen.round2(queen.gauge_avg(p.cs)), queen.round2((p.cs).min), queen.round2((p.cs).max), queen.round2((p.cs).last),
           round(queen.gauge_avg(p.rs)::numeric), round((p.rs).min::numeric), round((p.rs).max::numeric), round((p.rs).last::numeric),
           round(queen.gauge_avg(p.vs)::numeric), round((p.vs).min::numeric), round((p.vs).max::numeric), round((p.vs).last::numeric),
           queen.round2(queen.gauge_avg(p.ps)), queen.round2((p.ps).min), queen.round2((p.ps).max), queen.round2((p.ps).last),
           queen.round2(queen.gauge_avg(p.pi)), queen.round2((p.pi).min), queen.round2((p.pi).max), queen.round2((p.pi).last),
           queen.round2(queen.gauge_avg(p.pa)), queen.round2((p.pa).min), queen.round2((p.pa).max), queen.round2((p.pa).last),
           queen.round2(queen.gauge_avg(p.ps)), queen.round2((p.ps).min), queen.round2((p.ps).max), queen.round2((p.ps).last),
           queen.round2(queen.gauge_avg(p.pw)), queen.round2((p.pw).min), queen.round2((p.pw).max), queen.round2((p.pw).last),
           queen.round2(queen.gauge_avg(p.bj)), queen.round2((p.bj).min), queen.round2((p.bj).max), queen.round2((p.bj).last)
      FROM per p
     WHERE p.bucket BETWEEN p_from AND p_to
     ORDER BY p.hostname, p.port, p.bucket
$$;
COMMENT ON FUNCTION queen.analytics_system_metrics(timestamptz, timestamptz, text) IS
  'Per broker and bucket, oldest first: CPU, memory, pool and wait gauges.';

-- queen.analytics_worker_series(from, to, hostname): the system-wide timeSeries of
-- /analytics/worker-metrics, newest bucket first.
CREATE OR REPLACE FUNCTION queen.analytics_worker_series(p_from timestamptz, p_to timestamptz, p_hostname text)
RETURNS TABLE("timestamp" text, "pushMessages" bigint, "popMessages" bigint, "ackMessages" bigint,
              "pushRequests" bigint, "popRequests" bigint, "ackRequests" bigint, "jobsDone" bigint,
              "pushPerSecond" numeric, "popPerSecond" numeric, "ackPerSecond" numeric,
              "avgEventLoopLagMs" numeric, "maxEventLoopLagMs" numeric, "avgFreeSlots" numeric,
              "minFreeSlots" bigint, "dbConnections" numeric, "avgJobQueueSize" numeric, "maxJobQueueSize" bigint,
              "backoffSize" numeric, "avgLagMs" bigint, "maxLagMs" bigint, "lagCount" bigint, "dbErrors" bigint,
              "ackSuccess" bigint, "ackFailed" bigint, "dlqCount" bigint)
LANGUAGE sql STABLE
AS $$
    SELECT queen.iso_time(s.bucket), s.push_messages::bigint, s.pop_messages::bigint, s.ack_messages::bigint,
           s.push_requests::bigint, s.pop_requests::bigint, s.ack_requests::bigint, s.db_calls::bigint,
           queen.per_second(s.push_messages, w.m), queen.per_second(s.pop_messages, w.m),
           queen.per_second(s.ack_messages, w.m),
           queen.round2(s.loop_lag_avg), queen.round2(s.loop_lag_max), queen.round2(s.pool_idle_avg),
           s.pool_idle_min::bigint, queen.round2(s.pool_idle_avg + s.pool_active_avg),
           queen.round2(s.pool_waiting_avg), s.pool_waiting_max::bigint, queen.round2(s.parked_avg),
           CASE WHEN s.pop_lag_count > 0 THEN round(s.pop_lag_sum_ms / s.pop_lag_count)::bigint END,
           CASE WHEN s.pop_lag_count > 0 THEN s.pop_lag_max_ms END, s.pop_lag_count::bigint,
           s.db_errors::bigint, s.ack_success::bigint, s.ack_failed::bigint, s.dead_lettered::bigint
      FROM (SELECT queen.bucket_minutes(p_from, p_to) AS m) w,
           queen.system_buckets(p_from, p_to, w.m, p_hostname) s
     ORDER BY s.bucket DESC
$$;
COMMENT ON FUNCTION queen.analytics_worker_series(timestamptz, timestamptz, text) IS
  'The system-wide worker-metrics series, newest bucket first.';

-- queen.analytics_worker_queues(from, to): per queue, messages popped and their pop lag.
CREATE OR REPLACE FUNCTION queen.analytics_worker_queues(p_from timestamptz, p_to timestamptz)
RETURNS TABLE("queueName" text, "popCount" bigint, "avgLagMs" bigint, "maxLagMs" bigint)
LANGUAGE sql STABLE
AS $$
    SELECT m.queue_name, sum(m.pop_messages)::bigint,
           CASE WHEN sum(m.pop_lag_count) > 0 THEN round(sum(m.pop_lag_sum_ms) / sum(m.pop_lag_count))::bigint END,
           CASE WHEN sum(m.pop_lag_count) > 0 THEN max(m.pop_lag_max_ms) END
      FROM queen.queue_metrics m
     WHERE m.minute BETWEEN queen.bucket_start(p_from, 1) AND p_to
     GROUP BY m.queue_name
    HAVING sum(m.pop_messages) > 0
     ORDER BY 2 DESC, 1
$$;
COMMENT ON FUNCTION queen.analytics_worker_queues(timestamptz, timestamptz) IS
  'Per queue of the window: messages popped, average and largest pop lag.';

-- queen.analytics_worker_summary(from, to, hostname): the window's totals and the pending
-- messages of the stats snapshot.
CREATE OR REPLACE FUNCTION queen.analytics_worker_summary(p_from timestamptz, p_to timestamptz, p_hostname text)
RETURNS TABLE("totalPushMessages" bigint, "totalPopMessages" bigint, "totalAckMessages" bigint,
              "totalPushRequests" bigint, "totalPopRequests" bigint, "totalAckRequests" bigint,
              "totalDbErrors" bigint, "totalAckFailed" bigint, "totalDlq" bigint, "pendingMessages" bigint)
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(sum(s.push_messages), 0)::bigint, coalesce(sum(s.pop_messages), 0)::bigint,
           coalesce(sum(s.ack_messages), 0)::bigint, coalesce(sum(s.push_requests), 0)::bigint,
           coalesce(sum(s.pop_requests), 0)::bigint, coalesce(sum(s.ack_requests), 0)::bigint,
           coalesce(sum(s.db_errors), 0)::bigint, coalesce(sum(s.ack_failed), 0)::bigint,
           coalesce(sum(s.dead_lettered), 0)::bigint,
           (SELECT coalesce(sum(c.pending), 0)::bigint FROM queen.snapshot_queue_counts() c)
      FROM (SELECT queen.bucket_minutes(p_from, p_to) AS m) w,
           queen.system_buckets(p_from, p_to, w.m, p_hostname) s
$$;
COMMENT ON FUNCTION queen.analytics_worker_summary(timestamptz, timestamptz, text) IS
  'Totals of the window and the snapshot''s pending messages.';

-- The per-queue analytics take the tenant scope (sql/procedures/21_tenancy.sql) as a trailing
-- parameter: only its queues, named as it shows them. The forms without it are dropped.
DROP FUNCTION IF EXISTS queen.analytics_queue_lag(timestamptz, timestamptz, text);
DROP FUNCTION IF EXISTS queen.analytics_queue_ops(timestamptz, timestamptz, text);
DROP FUNCTION IF EXISTS queen.analytics_queue_parked(timestamptz, timestamptz, text);
DROP FUNCTION IF EXISTS queen.analytics_retention(timestamptz, timestamptz, text);

-- queen.analytics_queue_lag(from, to, queue, scope): one row per (minute, queue) with pops,
-- newest minute first, at most 100,000 rows (the oldest are cut).
CREATE OR REPLACE FUNCTION queen.analytics_queue_lag(p_from timestamptz, p_to timestamptz, p_queue text,
                                                     p_scope text DEFAULT NULL)
RETURNS TABLE("queueName" text, "popCount" bigint, "avgLagMs" bigint, "maxLagMs" bigint, "bucketTime" text)
LANGUAGE sql STABLE
AS $$
    SELECT queen.scoped_queue_name(m.queue_name, p_scope), m.pop_messages,
           round(m.pop_lag_sum_ms::numeric / m.pop_lag_count)::bigint,
           m.pop_lag_max_ms, queen.iso_time(m.minute)
      FROM queen.queue_metrics m
     WHERE m.minute BETWEEN p_from AND p_to AND m.pop_lag_count > 0
       AND (p_queue IS NULL OR m.queue_name = p_queue)
       AND queen.in_tenant_scope(queen.queue_key_tenant(m.queue_name), p_scope)
     ORDER BY m.minute DESC, m.queue_name
     LIMIT 100000
$$;
COMMENT ON FUNCTION queen.analytics_queue_lag(timestamptz, timestamptz, text, text) IS
  'Pop lag per minute and queue, newest first, at most 100,000 rows.';

-- queen.analytics_queue_ops(from, to, queue, scope): per bucket and queue, oldest first.
CREATE OR REPLACE FUNCTION queen.analytics_queue_ops(p_from timestamptz, p_to timestamptz, p_queue text,
                                                     p_scope text DEFAULT NULL)
RETURNS TABLE(bucket text, "queueName" text, "pushRequests" bigint, "pushMessages" bigint, "popMessages" bigint,
              "popEmpty" bigint, "ackRequests" bigint, "ackSuccess" bigint, "ackFailed" bigint,
              transactions bigint, "partitionsCreated" bigint, "partitionsDeleted" bigint,
              "partitionCount" bigint, "avgLagMs" bigint, "maxLagMs" bigint, "pushPerSecond" numeric,
              "popPerSecond" numeric, "ackPerSecond" numeric, "emptyPerSecond" numeric, "parkedCount" numeric)
LANGUAGE sql STABLE
AS $$
    SELECT queen.iso_time(q.bucket), queen.scoped_queue_name(q.queue_name, p_scope), q.push_requests::bigint, q.push_messages::bigint,
           q.pop_messages::bigint, q.pop_empty::bigint, q.ack_requests::bigint, q.ack_success::bigint,
           q.ack_failed::bigint, q.transactions::bigint, q.partitions_created::bigint,
           q.partitions_deleted::bigint, q.partition_count,
           CASE WHEN q.pop_lag_count > 0 THEN round(q.pop_lag_sum_ms / q.pop_lag_count)::bigint END,
           CASE WHEN q.pop_lag_count > 0 THEN q.pop_lag_max_ms END,
           queen.per_second(q.push_messages, w.m), queen.per_second(q.pop_messages, w.m),
           queen.per_second(q.ack_success + q.ack_failed, w.m), queen.per_second(q.pop_empty, w.m),
           queen.round2(q.parked_avg)
      FROM (SELECT queen.bucket_minutes(p_from, p_to) AS m) w,
           queen.queue_buckets(p_from, p_to, w.m, p_queue, NULL, NULL, p_scope) q
     ORDER BY q.bucket, q.queue_name
$$;
COMMENT ON FUNCTION queen.analytics_queue_ops(timestamptz, timestamptz, text, text) IS
  'Per bucket and queue of the window, oldest first: operations, rates, partitions, parked pops.';

-- queen.analytics_queue_parked(from, to, queue): parked long-polls per bucket, queue and
-- broker (the bucket's average: minutes without a row count as 0), oldest first.
CREATE OR REPLACE FUNCTION queen.analytics_queue_parked(p_from timestamptz, p_to timestamptz, p_queue text,
                                                        p_scope text DEFAULT NULL)
RETURNS TABLE(bucket text, "queueName" text, hostname text, port integer, "workerId" integer,
              "parkedCount" numeric)
LANGUAGE sql STABLE
AS $$
    SELECT queen.iso_time(b.bucket), queen.scoped_queue_name(m.queue_name, p_scope), m.hostname, m.port, 0,
           round((sum(m.parked_avg) / w.m)::numeric, 2)
      FROM (SELECT queen.bucket_minutes(p_from, p_to) AS m) w,
           queen.queue_parked_metrics m
     CROSS JOIN LATERAL (SELECT queen.bucket_start(m.minute, w.m) AS bucket) b
     WHERE m.minute >= p_from - make_interval(mins => w.m) AND m.minute <= p_to
       AND b.bucket BETWEEN p_from AND p_to
       AND (p_queue IS NULL OR m.queue_name = p_queue)
       AND queen.in_tenant_scope(queen.queue_key_tenant(m.queue_name), p_scope)
     GROUP BY b.bucket, m.queue_name, m.hostname, m.port, w.m
     ORDER BY b.bucket, m.queue_name, m.hostname, m.port
$$;
COMMENT ON FUNCTION queen.analytics_queue_parked(timestamptz, timestamptz, text, text) IS
  'Parked long-polls per bucket, queue and broker, oldest first.';

-- queen.analytics_retention(from, to, queue): messages removed per bucket by retention,
-- completed retention and maxWaitTimeSeconds (dead-lettered), oldest first.
CREATE OR REPLACE FUNCTION queen.analytics_retention(p_from timestamptz, p_to timestamptz, p_queue text,
                                                     p_scope text DEFAULT NULL)
RETURNS TABLE(bucket text, "retentionMsgs" bigint, "completedRetentionMsgs" bigint, "evictionMsgs" bigint,
              "totalMsgs" bigint, "eventCount" bigint)
LANGUAGE sql STABLE
AS $$
    SELECT queen.iso_time(b.bucket), sum(r.retention_msgs)::bigint, sum(r.completed_retention_msgs)::bigint,
           sum(r.eviction_msgs)::bigint,
           sum(r.retention_msgs + r.completed_retention_msgs + r.eviction_msgs)::bigint, count(*)
      FROM (SELECT queen.bucket_minutes(p_from, p_to) AS m) w,
           queen.retention_history r
     CROSS JOIN LATERAL (SELECT queen.bucket_start(r.run_at, w.m) AS bucket) b
     WHERE r.run_at >= p_from - make_interval(mins => w.m) AND r.run_at <= p_to
       AND b.bucket BETWEEN p_from AND p_to
       AND (p_queue IS NULL OR r.queue_name = p_queue)
       AND queen.in_tenant_scope(queen.queue_key_tenant(r.queue_name), p_scope)
     GROUP BY b.bucket
     ORDER BY b.bucket
$$;
COMMENT ON FUNCTION queen.analytics_retention(timestamptz, timestamptz, text, text) IS
  'Messages removed per bucket by retention, completed retention and maxWaitTimeSeconds.';
