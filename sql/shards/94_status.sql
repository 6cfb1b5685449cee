-- The proxy's hand-written status pages (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/94_status.sql).
-- The brokers' activity rows (requests, pop lag, parked pops, lifetime totals) are on the first
-- shard, so the functions reading only those are routed `first`; the ones below also read
-- what every shard holds for its own partitions (stats snapshots, leases, dead letters,
-- partition counts, retention) and merge every shard's answer: counts added up, queues merged
-- by name, ratios weighted by what they divide (docs/scaling.md, "Where state lives").

-- The commonest errors: each shard's ten commonest among its newest 10,000 dead letters,
-- added up by error text.
CREATE OR REPLACE FUNCTION queen.status_top_errors(p_queue text, p_namespace text, p_task text,
                                                   p_scope text DEFAULT NULL)
RETURNS TABLE(error text, count bigint)
LANGUAGE sql
AS $$
    SELECT e.error, sum(e.count)::bigint
      FROM queen_proxy.status_top_errors_every(p_queue, p_namespace, p_task, p_scope) e
     GROUP BY e.error
     ORDER BY 2 DESC, 1
     LIMIT 10
$$;
COMMENT ON FUNCTION queen.status_top_errors IS
  'Proxy: the commonest errors: each shard''s ten commonest among its newest 10,000 dead letters, added up by error text.';

-- A queue's object: the earliest created of the shards' copies (a queue configured through the
-- proxy has the same configuration on every shard).
CREATE OR REPLACE FUNCTION queen.status_queue(p_queue text, p_scope text DEFAULT NULL)
RETURNS TABLE(id text, name text, namespace text, task text, priority integer, "createdAt" text,
              "config.leaseTime" integer, "config.retryLimit" integer, "config.retryDelay" integer,
              "config.ttl" integer, "config.maxQueueSize" bigint, "config.deadLetterQueue" boolean)
LANGUAGE sql
AS $$
    SELECT * FROM queen_proxy.status_queue_every(p_queue, p_scope) q
     ORDER BY q."createdAt", q.id::bigint
     LIMIT 1
$$;
COMMENT ON FUNCTION queen.status_queue IS
  'Proxy: a queue''s object: the earliest created of the shards'' copies (a queue configured through the proxy has the same configuration on every shard).';

-- The queues list: each shard's first offset + limit matching queues, merged by name (the
-- earliest copy's id and creation, counts added up), newest first, then the page.
CREATE OR REPLACE FUNCTION queen.status_queues_list(p_queue text, p_namespace text, p_task text,
                                                    p_limit integer, p_offset integer, p_nonempty boolean,
                                                    p_scope text DEFAULT NULL)
RETURNS TABLE(id text, name text, namespace text, task text, "createdAt" text, partitions bigint,
              "totalConsumed" bigint, "messages.total" bigint, "messages.pending" bigint,
              "messages.processing" bigint, "messages.completed" bigint)
LANGUAGE sql
AS $$
    SELECT (array_agg(q.id ORDER BY q."createdAt", q.id::bigint))[1], q.name, max(q.namespace), max(q.task),
           min(q."createdAt"), sum(q.partitions)::bigint, sum(q."totalConsumed")::bigint,
           sum(q."messages.total")::bigint, sum(q."messages.pending")::bigint,
           sum(q."messages.processing")::bigint, sum(q."messages.completed")::bigint
      FROM queen_proxy.status_queues_list_every(p_queue, p_namespace, p_task, p_offset + p_limit, 0, p_nonempty,
                                                p_scope) q
     GROUP BY q.name
     ORDER BY min(q."createdAt") DESC, min(q.id::bigint) DESC
     LIMIT p_limit OFFSET p_offset
$$;
COMMENT ON FUNCTION queen.status_queues_list IS
  'Proxy: the queues list: each shard''s first offset + limit matching queues, merged by name (the earliest copy''s id and creation, counts added up), newest first, then the page.';

-- A queue's partitions: every shard's, by name.
CREATE OR REPLACE FUNCTION queen.status_queue_partitions(p_queue text)
RETURNS TABLE(id text, name text, "createdAt" text,
              "messages.total" bigint, "messages.pending" bigint, "messages.processing" bigint,
              "messages.completed" bigint, "messages.failed" bigint, "messages.deadLetter" bigint,
              "stats.total" bigint, "stats.pending" bigint, "stats.processing" bigint,
              "stats.completed" bigint, "stats.failed" bigint, "stats.deadLetter" bigint,
              "cursor.totalConsumed" bigint, "cursor.batchesConsumed" bigint,
              "lastActivity" text, "oldestMessage" text, "newestMessage" text)
LANGUAGE sql
AS $$
    SELECT * FROM queen_proxy.status_queue_partitions_every(p_queue) p ORDER BY p.name COLLATE "C"
$$;
COMMENT ON FUNCTION queen.status_queue_partitions IS
  'Proxy: a queue''s partitions: every shard''s, by name.';

-- The one-row summary: counts, leases and errors added up; batch efficiencies weighted by their
-- requests; the oldest snapshot's age.
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
LANGUAGE sql
AS $$
    SELECT max(s."timeRange.from"), max(s."timeRange.to"), max(s."bucketMinutes"),
           sum(s."messages.total")::bigint, sum(s."messages.pending")::bigint,
           sum(s."messages.processing")::bigint, sum(s."messages.completed")::bigint,
           sum(s."messages.failed")::bigint, sum(s."messages.deadLetter")::bigint,
           sum(s."messages.requests.push")::bigint, sum(s."messages.requests.pop")::bigint,
           sum(s."messages.requests.ack")::bigint,
           queen_proxy.weighted(array_agg(s."messages.batchEfficiency.push"), array_agg(s."messages.requests.push")),
           queen_proxy.weighted(array_agg(s."messages.batchEfficiency.pop"), array_agg(s."messages.requests.pop")),
           queen_proxy.weighted(array_agg(s."messages.batchEfficiency.ack"), array_agg(s."messages.requests.ack")),
           sum(s."leases.active")::bigint, sum(s."leases.partitionsWithLeases")::bigint,
           sum(s."leases.totalBatchSize")::bigint, sum(s."leases.totalAcked")::bigint,
           sum(s."deadLetterQueue.totalMessages")::bigint, sum(s."deadLetterQueue.affectedPartitions")::bigint,
           sum(s."errors.dbErrors")::bigint, sum(s."errors.ackFailed")::bigint, sum(s."errors.dlqMessages")::bigint,
           max(s."statsAge")
      FROM queen_proxy.status_summary_every(p_from, p_to, p_queue, p_namespace, p_task, p_scope) s
$$;
COMMENT ON FUNCTION queen.status_summary IS
  'Proxy: the one-row summary: counts, leases and errors added up.';

-- The resources overview: queues, namespaces and tasks counted by name over every shard;
-- partitions and messages added up; pop lag and throughput from the brokers' rows (first
-- shard); the offset lag's average weighted by each shard's partitions, its maximum the
-- largest; the oldest snapshot's age.
CREATE OR REPLACE FUNCTION queen.resources_overview(p_scope text DEFAULT NULL)
RETURNS TABLE(queues bigint, partitions bigint, namespaces bigint, tasks bigint,
              "messages.total" bigint, "messages.pending" bigint, "messages.processing" bigint,
              "messages.completed" bigint, "messages.failed" bigint, "messages.deadLetter" bigint,
              "lag.time.avg" numeric, "lag.time.median" numeric, "lag.time.min" numeric, "lag.time.max" numeric,
              "lag.offset.avg" numeric, "lag.offset.median" numeric, "lag.offset.min" numeric,
              "lag.offset.max" bigint,
              "throughput.ingestedPerSecond" numeric, "throughput.processedPerSecond" numeric,
              "timestamp" text, "statsAge" integer)
LANGUAGE sql
AS $$
    WITH names AS (
        SELECT DISTINCT q.name, q.namespace, q.task
          FROM queen_proxy.status_queues_list_every(NULL, NULL, NULL, 2147483647, 0, false, p_scope) q
    )
    SELECT (SELECT count(DISTINCT n.name) FROM names n), sum(o.partitions)::bigint,
           (SELECT count(DISTINCT n.namespace) FROM names n), (SELECT count(DISTINCT n.task) FROM names n),
           sum(o."messages.total")::bigint, sum(o."messages.pending")::bigint,
           sum(o."messages.processing")::bigint, sum(o."messages.completed")::bigint,
           sum(o."messages.failed")::bigint, sum(o."messages.deadLetter")::bigint,
           max(o."lag.time.avg"), NULL::numeric, NULL::numeric, max(o."lag.time.max"),
           round(sum(o."lag.offset.avg" * o.partitions) / nullif(sum(o.partitions)
                                                                  FILTER (WHERE o."lag.offset.avg" IS NOT NULL), 0), 2),
           NULL::numeric, NULL::numeric, max(o."lag.offset.max"),
           sum(o."throughput.ingestedPerSecond"), sum(o."throughput.processedPerSecond"),
           max(o."timestamp"), max(o."statsAge")
      FROM queen_proxy.resources_overview_every(p_scope) o
$$;
COMMENT ON FUNCTION queen.resources_overview IS
  'Proxy: the resources overview: queues, namespaces and tasks counted by name over every shard.';
