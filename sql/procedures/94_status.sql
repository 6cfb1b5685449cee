-- /api/v1/status and /api/v1/status/* (docs/status-and-analytics.md). Column names are the answer's JSON names, a dot nesting them into objects
-- (the broker renders any row that way); times are queen.iso_time text; rates are numeric
-- with 2 decimals. Window reads cost window × brokers or window × queues: they read only
-- the activity tables, the stats snapshot and the queues table.

-- Tenancy: every function here that counts queues takes the tenant scope
-- (sql/procedures/21_tenancy.sql) as a trailing parameter and then counts only its queues, as
-- under a filter; the brokers' own figures (event loop, CPU, pool, database errors) are NULL in
-- a scope, since they are every tenant's. The forms without it are dropped.
DROP FUNCTION IF EXISTS queen.matching_queue(text, text, text, text);
DROP FUNCTION IF EXISTS queen.matching_queues(text, text, text);
DROP FUNCTION IF EXISTS queen.filtered_queue_metrics(timestamptz, timestamptz, text, text, text);
DROP FUNCTION IF EXISTS queen.queue_buckets(timestamptz, timestamptz, integer, text, text, text);
DROP FUNCTION IF EXISTS queen.status_throughput(timestamptz, timestamptz, text, text, text);
DROP FUNCTION IF EXISTS queen.status_summary(timestamptz, timestamptz, text, text, text);
DROP FUNCTION IF EXISTS queen.status_top_errors(text, text, text);
DROP FUNCTION IF EXISTS queen.status_analytics(timestamptz, timestamptz, text, text, text, text);

-- queen.matching_queue(name, queue, namespace, task, scope): whether a queue name passes the
-- status filters (NULL: no filter) and is in the tenant scope; namespace and task are looked
-- up in queen.queues.
CREATE OR REPLACE FUNCTION queen.matching_queue(p_name text, p_queue text, p_namespace text, p_task text,
                                                p_scope text DEFAULT NULL)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT (p_queue IS NULL OR p_name = p_queue)
       AND (p_namespace IS NULL AND p_task IS NULL
            OR EXISTS (SELECT 1 FROM queen.queues q
                        WHERE q.name = p_name
                          AND (p_namespace IS NULL OR q.namespace = p_namespace)
                          AND (p_task IS NULL OR q.task = p_task)))
       AND queen.in_tenant_scope(queen.queue_key_tenant(p_name), p_scope)
$$;
COMMENT ON FUNCTION queen.matching_queue(text, text, text, text, text) IS
  'True when the queue name passes the queue, namespace and task filters.';

-- queen.matching_queues(queue, namespace, task, scope): the names passing the filters in the
-- tenant scope, for the
-- activity tables' rows to be matched by one hashed lookup each (a name given alone matches
-- even after its queue was deleted: its activity rows outlive it).
CREATE OR REPLACE FUNCTION queen.matching_queues(p_queue text, p_namespace text, p_task text,
                                                 p_scope text DEFAULT NULL)
RETURNS SETOF text
LANGUAGE sql STABLE
AS $$
    SELECT p_queue WHERE p_queue IS NOT NULL AND p_namespace IS NULL AND p_task IS NULL
                     AND queen.in_tenant_scope(queen.queue_key_tenant(p_queue), p_scope)
    UNION
    SELECT q.name FROM queen.queues q
     WHERE (p_queue IS NULL OR q.name = p_queue)
       AND (p_namespace IS NULL OR q.namespace = p_namespace)
       AND (p_task IS NULL OR q.task = p_task)
       AND queen.in_tenant_scope(q.tenant, p_scope)
$$;
COMMENT ON FUNCTION queen.matching_queues(text, text, text, text) IS
  'Queue names passing the queue, namespace and task filters.';

-- queen.per_second(count, bucket minutes): count per second of the bucket, 2 decimals.
CREATE OR REPLACE FUNCTION queen.per_second(p_count numeric, p_minutes integer)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT round(coalesce(p_count, 0) / (p_minutes * 60.0), 2) $$;
COMMENT ON FUNCTION queen.per_second(numeric, integer) IS 'Count per second of a bucket, 2 decimals.';

-- queen.system_buckets(from, to, bucket minutes, hostname): per bucket, broker_metrics summed
-- over brokers (those on hostname when given), and the gauges as averages over brokers of
-- each broker's bucket average.
CREATE OR REPLACE FUNCTION queen.system_buckets(p_from timestamptz, p_to timestamptz, p_minutes integer,
                                                p_hostname text DEFAULT NULL)
RETURNS TABLE(bucket timestamptz, push_requests numeric, push_messages numeric, pop_requests numeric,
              pop_messages numeric, ack_requests numeric, ack_messages numeric, ack_success numeric,
              ack_failed numeric, dead_lettered numeric, db_calls numeric, db_errors numeric,
              pop_lag_sum_ms numeric, pop_lag_count numeric, pop_lag_max_ms bigint,
              loop_lag_avg double precision, loop_lag_max double precision, pool_idle_min double precision,
              pool_idle_avg double precision, pool_waiting_avg double precision, pool_waiting_max double precision,
              cpu_user_avg double precision, cpu_system_avg double precision, rss_avg double precision,
              pool_active_avg double precision, pool_size_avg double precision, parked_avg double precision)
LANGUAGE sql STABLE
AS $$
    WITH per_broker AS (
        SELECT queen.bucket_start(b.minute, p_minutes) AS bucket, b.hostname, b.port,
               sum(b.push_requests) AS push_requests, sum(b.push_messages) AS push_messages,
               sum(b.pop_requests) AS pop_requests, sum(b.pop_messages) AS pop_messages,
               sum(b.ack_requests) AS ack_requests, sum(b.ack_messages) AS ack_messages,
               sum(b.ack_success) AS ack_success, sum(b.ack_failed) AS ack_failed,
               sum(b.dead_lettered) AS dead_lettered, sum(b.db_calls) AS db_calls, sum(b.db_errors) AS db_errors,
               sum(b.pop_lag_sum_ms) AS pop_lag_sum_ms, sum(b.pop_lag_count) AS pop_lag_count,
               max(b.pop_lag_max_ms) AS pop_lag_max_ms,
               queen.gauge_sum(b.loop_lag_ms ORDER BY b.minute) AS loop_lag,
               queen.gauge_sum(b.pool_idle ORDER BY b.minute) AS pool_idle,
               queen.gauge_sum(b.pool_waiting ORDER BY b.minute) AS pool_waiting,
               queen.gauge_sum(b.cpu_user ORDER BY b.minute) AS cpu_user,
               queen.gauge_sum(b.cpu_system ORDER BY b.minute) AS cpu_system,
               queen.gauge_sum(b.rss_bytes ORDER BY b.minute) AS rss,
               queen.gauge_sum(b.pool_active ORDER BY b.minute) AS pool_active,
               queen.gauge_sum(b.pool_size ORDER BY b.minute) AS pool_size,
               queen.gauge_sum(b.parked ORDER BY b.minute) AS parked
          FROM queen.broker_metrics b
         WHERE b.minute >= p_from - make_interval(mins => p_minutes) AND b.minute <= p_to
           AND (p_hostname IS NULL OR b.hostname = p_hostname)
         GROUP BY 1, b.hostname, b.port
    )
    SELECT pb.bucket, sum(pb.push_requests), sum(pb.push_messages), sum(pb.pop_requests), sum(pb.pop_messages),
           sum(pb.ack_requests), sum(pb.ack_messages), sum(pb.ack_success), sum(pb.ack_failed),
           sum(pb.dead_lettered), sum(pb.db_calls), sum(pb.db_errors), sum(pb.pop_lag_sum_ms),
           sum(pb.pop_lag_count), max(pb.pop_lag_max_ms),
           avg(queen.gauge_avg(pb.loop_lag)), max((pb.loop_lag).max), min((pb.pool_idle).min),
           avg(queen.gauge_avg(pb.pool_idle)), avg(queen.gauge_avg(pb.pool_waiting)), max((pb.pool_waiting).max),
           avg(queen.gauge_avg(pb.cpu_user)), avg(queen.gauge_avg(pb.cpu_system)), avg(queen.gauge_avg(pb.rss)),
           avg(queen.gauge_avg(pb.pool_active)), avg(queen.gauge_avg(pb.pool_size)), sum(queen.gauge_avg(pb.parked))
      FROM per_broker pb
     WHERE pb.bucket BETWEEN p_from AND p_to
     GROUP BY pb.bucket
$$;
COMMENT ON FUNCTION queen.system_buckets(timestamptz, timestamptz, integer, text) IS
  'Per bucket of the window: broker counts summed, gauges averaged over brokers.';

-- queen.filtered_queue_metrics(from, to, queue, namespace, task, scope): the queue_metrics rows
-- of minutes from..to of the matching queues. Without a filter a range of the primary key (with
-- a tenant scope, its rows kept by their queue keys); with one, a range of (queue_name, minute)
-- per matching queue.
CREATE OR REPLACE FUNCTION queen.filtered_queue_metrics(p_from timestamptz, p_to timestamptz, p_queue text,
                                                        p_namespace text, p_task text, p_scope text DEFAULT NULL)
RETURNS SETOF queen.queue_metrics
LANGUAGE sql STABLE
AS $$
    -- A tenant scope alone is read from the rows' queue keys, not from queen.queues: over
    -- shards the activity rows are on the first shard, a queue's row only on its own.
    SELECT m.* FROM queen.queue_metrics m
     WHERE p_queue IS NULL AND p_namespace IS NULL AND p_task IS NULL
       AND queen.in_tenant_scope(queen.queue_key_tenant(m.queue_name), p_scope)
       AND m.minute >= p_from AND m.minute <= p_to
    UNION ALL
    SELECT m.* FROM queen.matching_queues(p_queue, p_namespace, p_task, p_scope) n(name)
      JOIN queen.queue_metrics m ON m.queue_name = n.name
     WHERE (p_queue IS NOT NULL OR p_namespace IS NOT NULL OR p_task IS NOT NULL)
       AND m.minute >= p_from AND m.minute <= p_to
$$;
COMMENT ON FUNCTION queen.filtered_queue_metrics(timestamptz, timestamptz, text, text, text, text) IS
  'queue_metrics rows of a window for the queues passing the filters.';

-- queen.queue_buckets(from, to, bucket minutes, queue, namespace, task, scope): per bucket and
-- matching queue, queue_metrics summed over the bucket's minutes (queues named by stored key).
CREATE OR REPLACE FUNCTION queen.queue_buckets(p_from timestamptz, p_to timestamptz, p_minutes integer,
                                               p_queue text, p_namespace text, p_task text,
                                               p_scope text DEFAULT NULL)
RETURNS TABLE(bucket timestamptz, queue_name text, push_requests numeric, push_messages numeric,
              pop_messages numeric, pop_empty numeric, ack_requests numeric, ack_success numeric,
              ack_failed numeric, transactions numeric, pop_lag_sum_ms numeric, pop_lag_count numeric,
              pop_lag_max_ms bigint, parked_avg double precision, partitions_created numeric,
              partitions_deleted numeric, partition_count bigint)
LANGUAGE sql STABLE
AS $$
    SELECT b.bucket, m.queue_name, sum(m.push_requests), sum(m.push_messages), sum(m.pop_messages),
           sum(m.pop_empty), sum(m.ack_requests), sum(m.ack_success), sum(m.ack_failed), sum(m.transactions),
           sum(m.pop_lag_sum_ms), sum(m.pop_lag_count), max(m.pop_lag_max_ms),
           sum(m.parked_avg) / p_minutes, sum(m.partitions_created), sum(m.partitions_deleted),
           max(m.partition_count)
      FROM queen.filtered_queue_metrics(p_from - make_interval(mins => p_minutes), p_to, p_queue, p_namespace, p_task,
                                        p_scope) m
     CROSS JOIN LATERAL (SELECT queen.bucket_start(m.minute, p_minutes) AS bucket) b
     WHERE b.bucket BETWEEN p_from AND p_to
     GROUP BY b.bucket, m.queue_name
$$;
COMMENT ON FUNCTION queen.queue_buckets(timestamptz, timestamptz, integer, text, text, text, text) IS
  'Per bucket and matching queue of the window: queue_metrics summed.';

-- queen.status_throughput(from, to, queue, namespace, task): the throughput rows of
-- /api/v1/status, newest first. With a filter, the message counts come from the matching
-- queues' queue_metrics (processed falls back to popped messages when no ack was counted);
-- the loop, database, CPU and pool fields stay system-wide.
CREATE OR REPLACE FUNCTION queen.status_throughput(p_from timestamptz, p_to timestamptz, p_queue text,
                                                   p_namespace text, p_task text, p_scope text DEFAULT NULL)
RETURNS TABLE("timestamp" text, ingested bigint, processed bigint, "popMessages" bigint,
              "ingestedPerSecond" numeric, "processedPerSecond" numeric, "popPerSecond" numeric,
              "avgLagMs" bigint, "maxLagMs" bigint, "avgEventLoopLagMs" numeric, "maxEventLoopLagMs" numeric,
              "minFreeSlots" bigint, "dbErrors" bigint, "ackFailed" bigint, "dlqCount" bigint,
              "queenCpuUserPct" numeric, "queenCpuSysPct" numeric, "queenRssMb" numeric,
              "dbPoolActive" numeric, "dbPoolIdle" numeric, "dbPoolSize" numeric)
LANGUAGE sql STABLE
AS $$
    WITH w AS (
        SELECT queen.bucket_minutes(p_from, p_to) AS m,
               (p_queue IS NOT NULL OR p_namespace IS NOT NULL OR p_task IS NOT NULL OR p_scope IS NOT NULL)
                   AS filtered,
               p_scope IS NOT NULL AS scoped
    ), sys AS (
        SELECT s.* FROM w, queen.system_buckets(p_from, p_to, w.m) s
    ), q AS (
        SELECT qb.bucket, sum(qb.push_messages) AS pushed, sum(qb.pop_messages) AS popped,
               sum(qb.ack_success + qb.ack_failed) AS acked, sum(qb.ack_failed) AS ack_failed,
               sum(qb.pop_lag_sum_ms) AS lag_sum, sum(qb.pop_lag_count) AS lag_count, max(qb.pop_lag_max_ms) AS lag_max
          FROM w, queen.queue_buckets(p_from, p_to, w.m, p_queue, p_namespace, p_task, p_scope) qb
         WHERE w.filtered
         GROUP BY qb.bucket
    ), c AS (
        SELECT coalesce(sys.bucket, q.bucket) AS bucket,
               CASE WHEN w.filtered THEN coalesce(q.pushed, 0) ELSE sys.push_messages END AS ingested,
               CASE WHEN w.filtered THEN CASE WHEN coalesce(q.acked, 0) = 0 THEN coalesce(q.popped, 0) ELSE q.acked END
                    ELSE sys.ack_success + sys.ack_failed END AS processed,
               CASE WHEN w.filtered THEN coalesce(q.popped, 0) ELSE sys.pop_messages END AS popped,
               CASE WHEN w.filtered THEN q.lag_sum ELSE sys.pop_lag_sum_ms END AS lag_sum,
               CASE WHEN w.filtered THEN q.lag_count ELSE sys.pop_lag_count END AS lag_count,
               CASE WHEN w.filtered THEN q.lag_max ELSE sys.pop_lag_max_ms END AS lag_max,
               CASE WHEN w.filtered THEN coalesce(q.ack_failed, 0) ELSE sys.ack_failed END AS ack_failed,
               s2.loop_lag_avg, s2.loop_lag_max, s2.pool_idle_min, s2.db_errors, s2.dead_lettered,
               s2.cpu_user_avg, s2.cpu_system_avg, s2.rss_avg, s2.pool_active_avg, s2.pool_idle_avg,
               s2.pool_size_avg
          FROM (sys FULL JOIN q ON q.bucket = sys.bucket) CROSS JOIN w
          -- The brokers' figures are every tenant's: none in a scope.
          LEFT JOIN LATERAL (SELECT sys.* WHERE NOT w.scoped) s2 ON true
    )
    SELECT queen.iso_time(c.bucket), coalesce(c.ingested, 0)::bigint, coalesce(c.processed, 0)::bigint,
           coalesce(c.popped, 0)::bigint, queen.per_second(c.ingested, w.m), queen.per_second(c.processed, w.m),
           queen.per_second(c.popped, w.m),
           CASE WHEN c.lag_count > 0 THEN round(c.lag_sum / c.lag_count)::bigint END,
           CASE WHEN c.lag_count > 0 THEN c.lag_max END,
           round(c.loop_lag_avg::numeric, 2), round(c.loop_lag_max::numeric, 2), c.pool_idle_min::bigint,
           CASE WHEN NOT w.scoped THEN coalesce(c.db_errors, 0)::bigint END, coalesce(c.ack_failed, 0)::bigint,
           CASE WHEN NOT w.scoped THEN coalesce(c.dead_lettered, 0)::bigint END,
           round((c.cpu_user_avg / 100)::numeric, 2), round((c.cpu_system_avg / 100)::numeric, 2),
           round((c.rss_avg / 1048576)::numeric, 2), round(c.pool_active_avg::numeric, 2),
           round(c.pool_idle_avg::numeric, 2), round(c.pool_size_avg::numeric, 2)
      FROM c, w
     ORDER BY c.bucket DESC
$$;
COMMENT ON FUNCTION queen.status_throughput(timestamptz, timestamptz, text, text, text, text) IS
  'The throughput rows of /api/v1/status, newest bucket first.';

-- queen.status_summary(from, to, queue, namespace, task): everything of /api/v1/status but
-- its lists, as one row. Without a filter, messages.* and requests are lifetime totals
-- (metrics_totals); with one, they are the matching queues' snapshot counts and their
-- retained queue_metrics. pending and processing always come from the snapshot.
CREATE OR REPLACE FUNCTION queen.status_summary(p_from timestamptz, p_to timestamptz, p_queue text,
                                                p_namespace text, p_task text, p_scope text DEFAULT NULL)
RETURNS TABLE("timeRange.from" text, "timeRange.to" text, "bucketMinutes" integer,
              "messages.total" bigint, "messages.pending" bigint, "messages.processing" bigint,
              "messages.completed" bigint, "messages.failed" bigint, "messages.deadLetter" bigint,
              "messages.requests.push" bigint, "messages.requests.pop" bigint, "messages.requests.ack" bigint,
              "messages.batchEfficiency.push" numeric, "messages.batchEfficiency.pop" numeric,
              "messages.batchEfficiency.ack" numeric,
              "leases.active" bigint, "leases.partitionsWithLeases" bigint, "leases.totalBatchSize" bigint,
              "leases.totalAcked" bigint,
              "deadLetterQueue.totalMessages" bigint, "deadLetterQueue.affectedPartitions" bigint,
              "errors.dbErrors" bigint, "errors.ackFailed" bigint, "errors.dlqMessages" bigint,
              "statsAge" integer)
LANGUAGE sql STABLE
AS $$
    WITH w AS (
        SELECT queen.bucket_minutes(p_from, p_to) AS m,
               (p_queue IS NOT NULL OR p_namespace IS NOT NULL OR p_task IS NOT NULL OR p_scope IS NOT NULL)
                   AS filtered
    ), snap AS (
        SELECT coalesce(sum(s.total), 0) AS total, coalesce(sum(s.pending), 0) AS pending,
               coalesce(sum(s.processing), 0) AS processing, coalesce(sum(s.completed), 0) AS completed,
               coalesce(sum(s.dead_letter), 0) AS dead_letter,
               coalesce(sum(s.partitions_with_dead_letters), 0) AS dlq_partitions
          FROM queen.queue_stats s
          JOIN queen.queues q ON q.id = s.queue_id
         WHERE s.snapshot_id = queen.stats_snapshot_id()
           AND queen.matching_queue(q.name, p_queue, p_namespace, p_task, p_scope)
    ), life AS (
        SELECT CASE WHEN w.filtered THEN snap.total ELSE t.push_messages END AS total,
               CASE WHEN w.filtered THEN snap.completed ELSE t.ack_success END AS completed,
               CASE WHEN w.filtered THEN qm.ack_failed ELSE t.ack_failed END AS failed,
               CASE WHEN w.filtered THEN snap.dead_letter ELSE t.dead_lettered END AS dead_letter,
               CASE WHEN w.filtered THEN qm.push_requests ELSE t.push_requests END AS push_requests,
               CASE WHEN w.filtered THEN qm.push_messages ELSE t.push_messages END AS push_messages,
               CASE WHEN w.filtered THEN NULL ELSE t.pop_requests END AS pop_requests,
               CASE WHEN w.filtered THEN qm.pop_messages ELSE t.pop_messages END AS pop_messages,
               CASE WHEN w.filtered THEN qm.ack_requests ELSE t.ack_requests END AS ack_requests,
               CASE WHEN w.filtered THEN qm.ack_messages ELSE t.ack_messages END AS ack_messages
          FROM w, snap, queen.metrics_totals t,
               (SELECT coalesce(sum(m.push_requests), 0) AS push_requests,
                       coalesce(sum(m.push_messages), 0) AS push_messages,
                       coalesce(sum(m.pop_messages), 0) AS pop_messages,
                       coalesce(sum(m.ack_requests), 0) AS ack_requests,
                       coalesce(sum(m.ack_success + m.ack_failed), 0) AS ack_messages,
                       coalesce(sum(m.ack_failed), 0) AS ack_failed
                  FROM queen.filtered_queue_metrics('-infinity', 'infinity', p_queue, p_namespace, p_task, p_scope) m
                 WHERE p_queue IS NOT NULL OR p_namespace IS NOT NULL OR p_task IS NOT NULL OR p_scope IS NOT NULL) qm
    ), leases AS (
        SELECT count(*) AS active, count(DISTINCT c.partition_id) AS partitions,
               -- Per live lease, what it handed out when it was taken and what has been
               -- acknowledged of it since (migration 23; a lease older than that: what is left).
               coalesce(sum(greatest(c.lease_end - coalesce(c.lease_start, c.committed), 0)), 0) AS batch,
               coalesce(sum(greatest(c.committed - coalesce(c.lease_start, c.committed), 0)), 0) AS acked
          FROM queen.log_consumers c
          JOIN queen.queues q ON q.id = c.queue_id
         WHERE c.lease_id IS NOT NULL AND c.lease_expires_at > now()
           AND queen.matching_queue(q.name, p_queue, p_namespace, p_task, p_scope)
    ), win AS (
        SELECT coalesce(sum(s.db_errors), 0) AS db_errors, coalesce(sum(s.dead_lettered), 0) AS dead_lettered,
               coalesce(sum(s.ack_failed), 0) AS ack_failed
          FROM w, queen.system_buckets(p_from, p_to, w.m) s
         -- The brokers' figures are every tenant's: none in a scope.
         WHERE p_scope IS NULL
    )
    SELECT queen.iso_time(p_from), queen.iso_time(p_to), w.m,
           life.total::bigint, snap.pending::bigint, snap.processing::bigint, life.completed::bigint,
           life.failed::bigint, life.dead_letter::bigint,
           life.push_requests::bigint, life.pop_requests::bigint, life.ack_requests::bigint,
           CASE WHEN life.push_requests > 0 THEN round(life.push_messages::numeric / life.push_requests, 2) ELSE 0 END,
           CASE WHEN life.pop_requests > 0 THEN round(life.pop_messages::numeric / life.pop_requests, 2) ELSE 0 END,
           CASE WHEN life.ack_requests > 0 THEN round(life.ack_messages::numeric / life.ack_requests, 2) ELSE 0 END,
           leases.active, leases.partitions, leases.batch::bigint, leases.acked::bigint,
           snap.dead_letter::bigint, snap.dlq_partitions::bigint,
           CASE WHEN p_scope IS NULL THEN win.db_errors::bigint END,
           CASE WHEN p_scope IS NULL THEN win.ack_failed::bigint END,
           CASE WHEN p_scope IS NULL THEN win.dead_lettered::bigint END,
           queen.stats_age()
      FROM w, snap, life, leases, win
$$;
COMMENT ON FUNCTION queen.status_summary(timestamptz, timestamptz, text, text, text, text) IS
  'The one-row part of /api/v1/status: lifetime totals, snapshot counts, leases, window errors.';

-- queen.status_top_errors(queue, namespace, task): the commonest errors among the newest
-- 10,000 dead letters of the matching queues (a bounded read of dead_letters_queue).
CREATE OR REPLACE FUNCTION queen.status_top_errors(p_queue text, p_namespace text, p_task text,
                                                   p_scope text DEFAULT NULL)
RETURNS TABLE(error text, count bigint)
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(d.error_message, d.reason), count(*)
      FROM (SELECT d.error_message, d.reason
              FROM queen.dead_letters d
              JOIN queen.queues q ON q.id = d.queue_id
             WHERE queen.matching_queue(q.name, p_queue, p_namespace, p_task, p_scope)
             ORDER BY d.id DESC
             LIMIT 10000) d
     GROUP BY 1
     ORDER BY 2 DESC, 1
     LIMIT 10
$$;
COMMENT ON FUNCTION queen.status_top_errors(text, text, text, text) IS
  'Up to 10 commonest errors among the newest 10,000 matching dead letters.';

-- queen.status_queues_list(queue, namespace, task, limit, offset, nonempty, scope): the
-- matching queues of the tenant scope (sql/procedures/21_tenancy.sql) with their snapshot
-- counts; with p_nonempty only those holding at least one message. Names as the scope shows them.
DROP FUNCTION IF EXISTS queen.status_queues_list(text, text, text, integer, integer, boolean);
CREATE OR REPLACE FUNCTION queen.status_queues_list(p_queue text, p_namespace text, p_task text,
                                                    p_limit integer, p_offset integer, p_nonempty boolean,
                                                    p_scope text DEFAULT NULL)
RETURNS TABLE(id text, name text, namespace text, task text, "createdAt" text, partitions bigint,
              "totalConsumed" bigint, "messages.total" bigint, "messages.pending" bigint,
              "messages.processing" bigint, "messages.completed" bigint)
LANGUAGE sql STABLE
AS $$
    SELECT q.id::text, queen.scoped_queue_name(q.name, p_scope), q.namespace, q.task, queen.iso_time(q.created_at),
           coalesce(c.partitions, 0), coalesce(c.completed, 0), coalesce(c.total, 0), coalesce(c.pending, 0),
           coalesce(c.processing, 0), coalesce(c.completed, 0)
      FROM queen.queues q
      LEFT JOIN queen.snapshot_queue_counts() c ON c.queue_id = q.id
     WHERE queen.matching_queue(q.name, p_queue, p_namespace, p_task, p_scope)
       AND (NOT p_nonempty OR coalesce(c.total, 0) > 0)
     ORDER BY q.created_at DESC, q.id DESC
     LIMIT p_limit OFFSET p_offset
$$;
COMMENT ON FUNCTION queen.status_queues_list(text, text, text, integer, integer, boolean, text) IS
  'Matching queues newest first with their snapshot counts, paged.';

-- queen.status_workers(since): the brokers that flushed since then, with their last loop,
-- pool and wait figures and the messages they pushed and acknowledged since then.
CREATE OR REPLACE FUNCTION queen.status_workers(p_since timestamptz)
RETURNS TABLE(hostname text, port integer, "workerId" integer, "avgEventLoopLagMs" numeric,
              "maxEventLoopLagMs" numeric, "freeSlots" bigint, "dbConnections" bigint, "jobQueueSize" bigint,
              "backoffSize" bigint, "messagesProcessed" bigint, "lastSeen" text)
LANGUAGE sql STABLE
AS $$
    SELECT b.hostname, b.port, 0,
           round(queen.gauge_avg(queen.gauge_sum(b.loop_lag_ms ORDER BY b.minute))::numeric, 2),
           round((queen.gauge_sum(b.loop_lag_ms ORDER BY b.minute)).max::numeric, 2),
           (queen.gauge_sum(b.pool_idle ORDER BY b.minute)).last::bigint,
           ((queen.gauge_sum(b.pool_idle ORDER BY b.minute)).last
             + (queen.gauge_sum(b.pool_active ORDER BY b.minute)).last)::bigint,
           (queen.gauge_sum(b.pool_waiting ORDER BY b.minute)).last::bigint,
           (queen.gauge_sum(b.parked ORDER BY b.minute)).last::bigint,
           sum(b.push_messages + b.ack_messages)::bigint,
           queen.iso_time(max(b.minute))
      FROM queen.broker_metrics b
     WHERE b.minute >= date_trunc('minute', p_since)
     GROUP BY b.hostname, b.port
     ORDER BY b.hostname, b.port
$$;
COMMENT ON FUNCTION queen.status_workers(timestamptz) IS
  'Brokers seen since the given time with their latest loop, pool and wait figures.';

-- queen.status_queue(queue, scope): /api/v1/status/queues/:queue's queue object (no row:
-- unknown), its name as the tenant scope shows it.
DROP FUNCTION IF EXISTS queen.status_queue(text);
CREATE OR REPLACE FUNCTION queen.status_queue(p_queue text, p_scope text DEFAULT NULL)
RETURNS TABLE(id text, name text, namespace text, task text, priority integer, "createdAt" text,
              "config.leaseTime" integer, "config.retryLimit" integer, "config.retryDelay" integer,
              "config.ttl" integer, "config.maxQueueSize" bigint, "config.deadLetterQueue" boolean)
LANGUAGE sql STABLE
AS $$
    SELECT q.id::text, queen.scoped_queue_name(q.name, p_scope), q.namespace, q.task, q.priority,
           queen.iso_time(q.created_at), q.lease_time,
           q.retry_limit, q.retry_delay, q.ttl, q.max_size, q.dead_letter_queue
      FROM queen.queues q WHERE q.name = p_queue
$$;
COMMENT ON FUNCTION queen.status_queue(text, text) IS 'The queue object of /api/v1/status/queues/:queue.';

-- queen.status_queue_partitions(queue): its partitions by name, counted now (partition_stats),
-- with Σ committed over groups and the last commit in any group.
CREATE OR REPLACE FUNCTION queen.status_queue_partitions(p_queue text)
RETURNS TABLE(id text, name text, "createdAt" text,
              "messages.total" bigint, "messages.pending" bigint, "messages.processing" bigint,
              "messages.completed" bigint, "messages.failed" bigint, "messages.deadLetter" bigint,
              "stats.total" bigint, "stats.pending" bigint, "stats.processing" bigint,
              "stats.completed" bigint, "stats.failed" bigint, "stats.deadLetter" bigint,
              "cursor.totalConsumed" bigint, "cursor.batchesConsumed" bigint,
              "lastActivity" text, "oldestMessage" text, "newestMessage" text)
LANGUAGE sql STABLE
-- The ordered scan of each cursor's key (queen.partition_cursors; see queen.queue_detail).
SET enable_bitmapscan = off
AS $$
    SELECT p.id::text, p.name, queen.iso_time(p.created_at),
           s.total, s.pending, s.processing, s.completed, 0::bigint, s.dead_letter,
           s.total, s.pending, s.processing, s.completed, 0::bigint, s.dead_letter,
           coalesce(g.consumed, 0)::bigint, 0::bigint, queen.iso_time(g.last_commit),
           queen.iso_time(s.oldest_waiting_at), queen.iso_time(s.newest_at)
      FROM queen.queues q
      JOIN queen.log_partitions p ON p.queue_id = q.id
     CROSS JOIN LATERAL queen.partition_stats(ARRAY[p.id]) s
      LEFT JOIN LATERAL (SELECT sum(c.committed) AS consumed, max(c.committed_at) AS last_commit
                           FROM queen.partition_cursors(ARRAY[p.id]) c) g ON true
     WHERE q.name = p_queue
     ORDER BY p.name
$$;
COMMENT ON FUNCTION queen.status_queue_partitions(text) IS
  'Partitions of a queue with counts computed now, consumption and last activity.';

-- queen.status_analytics(from, to, interval, queue, namespace, task): messages pushed per
-- bucket of the interval ('minute', 'hour' or 'day', truncated in UTC) to the matching
-- queues, every bucket from from's to to's, zero-filled, oldest first.
CREATE OR REPLACE FUNCTION queen.status_analytics(p_from timestamptz, p_to timestamptz, p_interval text,
                                                  p_queue text, p_namespace text, p_task text,
                                                  p_scope text DEFAULT NULL)
RETURNS TABLE("timestamp" text, messages bigint)
LANGUAGE sql STABLE
AS $$
    WITH buckets AS (
        SELECT b AS bucket
          FROM generate_series(date_trunc(p_interval, p_from, 'UTC'), date_trunc(p_interval, p_to, 'UTC'),
                               ('1 ' || p_interval)::interval) b
    ), counts AS (
        SELECT date_trunc(p_interval, m.minute, 'UTC') AS bucket, sum(m.push_messages) AS n
          FROM queen.filtered_queue_metrics(date_trunc(p_interval, p_from, 'UTC'), p_to, p_queue, p_namespace, p_task,
                                            p_scope) m
         WHERE p_queue IS NOT NULL OR p_namespace IS NOT NULL OR p_task IS NOT NULL OR p_scope IS NOT NULL
         GROUP BY 1
        UNION ALL
        -- Without a filter every queue counts: the brokers' rows hold the same sums, fewer rows.
        SELECT date_trunc(p_interval, b.minute, 'UTC'), sum(b.push_messages)
          FROM queen.broker_metrics b
         WHERE p_queue IS NULL AND p_namespace IS NULL AND p_task IS NULL AND p_scope IS NULL
           AND b.minute >= date_trunc(p_interval, p_from, 'UTC') AND b.minute <= p_to
         GROUP BY 1
    )
    SELECT queen.iso_time(b.bucket), coalesce(c.n, 0)::bigint
      FROM buckets b LEFT JOIN counts c ON c.bucket = b.bucket
     ORDER BY b.bucket
$$;
COMMENT ON FUNCTION queen.status_analytics(timestamptz, timestamptz, text, text, text, text, text) IS
  'Messages pushed per minute, hour or day bucket of the window, zero-filled, oldest first.';

-- queen.resources_overview(scope): /api/v1/resources/overview as one row. Counts of queues,
-- partitions (snapshot), namespaces and tasks; lifetime message totals (metrics_totals) with
-- pending and processing from the snapshot; pop lag over the last 5 minutes in seconds; cursor
-- lag in offsets from the snapshot; pushed and acknowledged messages per second over the
-- last 5 minutes. Medians and minimums are not tracked: NULL. In a tenant scope
-- (sql/procedures/21_tenancy.sql) everything covers its queues only: the totals are then the
-- snapshot's counts and the retained queue_metrics (as status_summary under a filter), and the
-- recent figures come from its queues' queue_metrics.
DROP FUNCTION IF EXISTS queen.resources_overview();
CREATE OR REPLACE FUNCTION queen.resources_overview(p_scope text DEFAULT NULL)
RETURNS TABLE(queues bigint, partitions bigint, namespaces bigint, tasks bigint,
              "messages.total" bigint, "messages.pending" bigint, "messages.processing" bigint,
              "messages.completed" bigint, "messages.failed" bigint, "messages.deadLetter" bigint,
              "lag.time.avg" numeric, "lag.time.median" numeric, "lag.time.min" numeric, "lag.time.max" numeric,
              "lag.offset.avg" numeric, "lag.offset.median" numeric, "lag.offset.min" numeric,
              "lag.offset.max" bigint,
              "throughput.ingestedPerSecond" numeric, "throughput.processedPerSecond" numeric,
              "timestamp" text, "statsAge" integer)
LANGUAGE sql STABLE
AS $$
    WITH scoped_queues AS (
        SELECT q.* FROM queen.queues q WHERE queen.in_tenant_scope(q.tenant, p_scope)
    ), snap AS (
        SELECT coalesce(sum(c.partitions), 0) AS partitions, coalesce(sum(c.pending), 0) AS pending,
               coalesce(sum(c.processing), 0) AS processing, coalesce(sum(c.total), 0) AS total,
               coalesce(sum(c.completed), 0) AS completed, coalesce(sum(c.dead_letter), 0) AS dead_letter
          FROM queen.snapshot_queue_counts() c
         WHERE p_scope IS NULL OR EXISTS (SELECT 1 FROM scoped_queues q WHERE q.id = c.queue_id)
    ), lag AS (
        SELECT sum(g.lag) AS lag, sum(g.cursors) AS cursors, max(g.max_lag) AS max_lag
          FROM queen.group_stats g
         WHERE g.snapshot_id = queen.stats_snapshot_id()
           AND (p_scope IS NULL OR EXISTS (SELECT 1 FROM scoped_queues q WHERE q.id = g.queue_id))
    ), recent AS (
        -- Without a scope the brokers' rows (the same sums, fewer rows); in one, its queues'.
        SELECT CASE WHEN p_scope IS NULL THEN b.lag_sum ELSE m.lag_sum END AS lag_sum,
               CASE WHEN p_scope IS NULL THEN b.lag_count ELSE m.lag_count END AS lag_count,
               CASE WHEN p_scope IS NULL THEN b.lag_max ELSE m.lag_max END AS lag_max,
               CASE WHEN p_scope IS NULL THEN b.pushed ELSE m.pushed END AS pushed,
               CASE WHEN p_scope IS NULL THEN b.acked ELSE m.acked END AS acked
          FROM (SELECT sum(b.pop_lag_sum_ms) AS lag_sum, sum(b.pop_lag_count) AS lag_count,
                       max(b.pop_lag_max_ms) AS lag_max, coalesce(sum(b.push_messages), 0) AS pushed,
                       coalesce(sum(b.ack_messages), 0) AS acked
                  FROM queen.broker_metrics b
                 WHERE p_scope IS NULL AND b.minute >= date_trunc('minute', now() - interval '5 minutes')) b,
               (SELECT sum(m.pop_lag_sum_ms) AS lag_sum, sum(m.pop_lag_count) AS lag_count,
                       max(m.pop_lag_max_ms) AS lag_max, coalesce(sum(m.push_messages), 0) AS pushed,
                       coalesce(sum(m.ack_success + m.ack_failed), 0) AS acked
                  FROM queen.filtered_queue_metrics(date_trunc('minute', now() - interval '5 minutes'), 'infinity',
                                                    NULL, NULL, NULL, p_scope) m
                 WHERE p_scope IS NOT NULL) m
    ), life AS (
        SELECT CASE WHEN p_scope IS NULL THEN t.push_messages ELSE snap.total END AS total,
               CASE WHEN p_scope IS NULL THEN t.ack_success ELSE snap.completed END AS completed,
               CASE WHEN p_scope IS NULL THEN t.ack_failed ELSE qm.ack_failed END AS failed,
               CASE WHEN p_scope IS NULL THEN t.dead_lettered ELSE snap.dead_letter END AS dead_letter
          FROM snap, queen.metrics_totals t,
               (SELECT coalesce(sum(m.ack_failed), 0) AS ack_failed
                  FROM queen.filtered_queue_metrics('-infinity', 'infinity', NULL, NULL, NULL, p_scope) m
                 WHERE p_scope IS NOT NULL) qm
    )
    SELECT (SELECT count(*) FROM scoped_queues), snap.partitions::bigint,
           (SELECT count(DISTINCT q.namespace) FROM scoped_queues q WHERE q.namespace IS NOT NULL),
           (SELECT count(DISTINCT q.task) FROM scoped_queues q WHERE q.task IS NOT NULL),
           life.total::bigint, snap.pending::bigint, snap.processing::bigint, life.completed::bigint,
           life.failed::bigint, life.dead_letter::bigint,
           CASE WHEN recent.lag_count > 0 THEN round(recent.lag_sum / recent.lag_count / 1000.0, 2) END, NULL::numeric,
           NULL::numeric, CASE WHEN recent.lag_count > 0 THEN round(recent.lag_max / 1000.0, 2) END,
           CASE WHEN lag.cursors > 0 THEN round(lag.lag::numeric / lag.cursors, 2) END, NULL::numeric, NULL::numeric,
           lag.max_lag, round(recent.pushed / 300.0, 2), round(recent.acked / 300.0, 2),
           queen.iso_time(now()), queen.stats_age()
      FROM snap, lag, recent, life
$$;
COMMENT ON FUNCTION queen.resources_overview(text) IS
  'The one row of /api/v1/resources/overview in a tenant scope: counts, lifetime totals, lag and recent throughput.';
