-- The proxy's hand-written analytics (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/95_analytics.sql):
-- every shard's answer merged as in 94_status.sql: counts added up, ratios weighted by what
-- they divide.

-- queen_proxy.weighted(values, weights): Σ value × weight / Σ weight, to two decimals; 0 when
-- no weight (a ratio of a total over its requests, from every shard's ratio and requests).
CREATE OR REPLACE FUNCTION queen_proxy.weighted(p_values numeric[], p_weights bigint[])
RETURNS numeric
LANGUAGE sql IMMUTABLE
AS $$
    SELECT coalesce(round(sum(v * w) / nullif(sum(w), 0), 2), 0)
      FROM unnest(p_values, p_weights) AS u(v, w)
     WHERE v IS NOT NULL AND w IS NOT NULL
$$;
COMMENT ON FUNCTION queen_proxy.weighted IS
  'Σ value × weight / Σ weight, to two decimals; 0 when no weight.';

-- Operations per bucket and queue: counters, rates and partition counts added up (the
-- brokers' counters are on the first shard, each shard's partition counts on it); pop lag
-- and parked pops from the first shard, the only one that has them.
CREATE OR REPLACE FUNCTION queen.analytics_queue_ops(p_from timestamptz, p_to timestamptz, p_queue text,
                                                     p_scope text DEFAULT NULL)
RETURNS TABLE(bucket text, "queueName" text, "pushRequests" bigint, "pushMessages" bigint, "popMessages" bigint,
              "popEmpty" bigint, "ackRequests" bigint, "ackSuccess" bigint, "ackFailed" bigint,
              transactions bigint, "partitionsCreated" bigint, "partitionsDeleted" bigint,
              "partitionCount" bigint, "avgLagMs" bigint, "maxLagMs" bigint, "pushPerSecond" numeric,
              "popPerSecond" numeric, "ackPerSecond" numeric, "emptyPerSecond" numeric, "parkedCount" numeric)
LANGUAGE sql
AS $$
    SELECT o.bucket, o."queueName", sum(o."pushRequests")::bigint, sum(o."pushMessages")::bigint,
           sum(o."popMessages")::bigint, sum(o."popEmpty")::bigint, sum(o."ackRequests")::bigint,
           sum(o."ackSuccess")::bigint, sum(o."ackFailed")::bigint, sum(o.transactions)::bigint,
           sum(o."partitionsCreated")::bigint, sum(o."partitionsDeleted")::bigint, sum(o."partitionCount")::bigint,
           max(o."avgLagMs"), max(o."maxLagMs"), sum(o."pushPerSecond"), sum(o."popPerSecond"),
           sum(o."ackPerSecond"), sum(o."emptyPerSecond"), max(o."parkedCount")
      FROM queen_proxy.analytics_queue_ops_every(p_from, p_to, p_queue, p_scope) o
     GROUP BY o.bucket, o."queueName"
     ORDER BY o.bucket, o."queueName" COLLATE "C"
$$;
COMMENT ON FUNCTION queen.analytics_queue_ops IS
  'Proxy: operations per bucket and queue: counters, rates and partition counts added up (the brokers'' counters are on the first shard, each shard''s partition counts on it).';

-- Retention per bucket: every shard's removals added up.
CREATE OR REPLACE FUNCTION queen.analytics_retention(p_from timestamptz, p_to timestamptz, p_queue text,
                                                     p_scope text DEFAULT NULL)
RETURNS TABLE(bucket text, "retentionMsgs" bigint, "completedRetentionMsgs" bigint, "evictionMsgs" bigint,
              "totalMsgs" bigint, "eventCount" bigint)
LANGUAGE sql
AS $$
    SELECT r.bucket, sum(r."retentionMsgs")::bigint, sum(r."completedRetentionMsgs")::bigint,
           sum(r."evictionMsgs")::bigint, sum(r."totalMsgs")::bigint, sum(r."eventCount")::bigint
      FROM queen_proxy.analytics_retention_every(p_from, p_to, p_queue, p_scope) r
     GROUP BY r.bucket
     ORDER BY r.bucket
$$;
COMMENT ON FUNCTION queen.analytics_retention IS
  'Proxy: retention per bucket: every shard''s removals added up.';

-- The worker summary: the window's totals (first shard) and every shard's pending messages.
CREATE OR REPLACE FUNCTION queen.analytics_worker_summary(p_from timestamptz, p_to timestamptz, p_hostname text)
RETURNS TABLE("totalPushMessages" bigint, "totalPopMessages" bigint, "totalAckMessages" bigint,
              "totalPushRequests" bigint, "totalPopRequests" bigint, "totalAckRequests" bigint,
              "totalDbErrors" bigint, "totalAckFailed" bigint, "totalDlq" bigint, "pendingMessages" bigint)
LANGUAGE sql
AS $$
    SELECT sum(w."totalPushMessages")::bigint, sum(w."totalPopMessages")::bigint, sum(w."totalAckMessages")::bigint,
           sum(w."totalPushRequests")::bigint, sum(w."totalPopRequests")::bigint, sum(w."totalAckRequests")::bigint,
           sum(w."totalDbErrors")::bigint, sum(w."totalAckFailed")::bigint, sum(w."totalDlq")::bigint,
           sum(w."pendingMessages")::bigint
      FROM queen_proxy.analytics_worker_summary_every(p_from, p_to, p_hostname) w
$$;
COMMENT ON FUNCTION queen.analytics_worker_summary IS
  'Proxy: the worker summary: the window''s totals (first shard) and every shard''s pending messages.';
