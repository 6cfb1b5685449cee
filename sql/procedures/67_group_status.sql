-- Consumer-group introspection (GET /api/v1/consumer-groups[/:group]).
-- queen.group_cursors(group, scope) -> one row per cursor of the group (NULL: of every group)
--   on the queues of the tenant scope (sql/procedures/21_tenancy.sql; names as it shows them),
--   plus one row with NULL partition columns per subscription record on a queue where the
--   group has no cursor (registered before the queue's first push). Ordered by group,
--   queue, partition name (C collation).
--   Columns: consumer_group, queue_name, registered (a subscription record exists),
--   subscription_at (NULL = from the beginning), partition_id, partition_name, committed,
--   last_offset (the partition's newest offset), lease_id / lease_end / lease_expires_at
--   (NULL unless the lease is live: an expired lease is nobody's), attempts (failed
--   deliveries of the head, committed + 1), retry_at (NULL unless still in the future),
--   last_claimed_at, pending_since (createdAt of the oldest message past the cursor, NULL
--   when there is none), committed_at, consumed (the group has consumed from the partition:
--   queen.cursor_consumed).
-- Reads only; takes no locks. Cost: one index probe into log_segments per cursor with a
--   backlog.

DROP FUNCTION IF EXISTS queen.group_cursors(text);  -- it gained the tenant scope
DROP FUNCTION IF EXISTS queen.group_cursors(text, text);
CREATE FUNCTION queen.group_cursors(p_group text, p_scope text DEFAULT NULL)
RETURNS TABLE(consumer_group text, queue_name text, registered boolean, subscription_at timestamptz,
              partition_id bigint, partition_name text, committed bigint, last_offset bigint,
              lease_id uuid, lease_end bigint, lease_expires_at timestamptz, attempts integer,
              retry_at timestamptz, last_claimed_at timestamptz, pending_since timestamptz,
              committed_at timestamptz, consumed boolean)
LANGUAGE sql STABLE
AS $$
    SELECT u.* FROM (
    SELECT lc.consumer_group, queen.scoped_queue_name(q.name, p_scope), g.consumer_group IS NOT NULL,
           g.subscription_at,
           lc.partition_id, p.name, lc.committed, h.last_offset,
           CASE WHEN live THEN lc.lease_id END,
           CASE WHEN live THEN lc.lease_end END,
           CASE WHEN live THEN lc.lease_expires_at END,
           CASE WHEN lc.attempts_offset = lc.committed + 1 THEN lc.attempts ELSE 0 END,
           CASE WHEN lc.retry_at > now() THEN lc.retry_at END,
           lc.last_claimed_at,
           CASE WHEN h.last_offset > lc.committed THEN
                (SELECT s.created_at FROM queen.log_segments s
                  WHERE s.partition_id = lc.partition_id AND s.last_offset > lc.committed
                  ORDER BY s.last_offset LIMIT 1) END,
           lc.committed_at, queen.cursor_consumed(lc.last_claimed_at, lc.committed_at)
      FROM queen.log_consumers lc
      JOIN queen.log_partitions p ON p.id = lc.partition_id
      JOIN queen.queues q ON q.id = lc.queue_id
      LEFT JOIN queen.consumer_groups g ON g.queue_name = q.name AND g.consumer_group = lc.consumer_group
     CROSS JOIN LATERAL (SELECT lc.lease_id IS NOT NULL AND lc.lease_expires_at > now() AS live) l
     CROSS JOIN LATERAL (SELECT queen.partition_last_offset(lc.partition_id) AS last_offset) h
     WHERE (p_group IS NULL OR lc.consumer_group = p_group) AND queen.in_tenant_scope(q.tenant, p_scope)
    UNION ALL
    SELECT g.consumer_group, queen.scoped_queue_name(g.queue_name, p_scope), true, g.subscription_at,
           NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
      FROM queen.consumer_groups g
     WHERE (p_group IS NULL OR g.consumer_group = p_group)
       AND queen.in_tenant_scope(queen.queue_key_tenant(g.queue_name), p_scope)
       AND NOT EXISTS (SELECT 1 FROM queen.log_consumers lc
                         JOIN queen.queues q ON q.id = lc.queue_id
                        WHERE q.name = g.queue_name AND lc.consumer_group = g.consumer_group)
    ) u(consumer_group, queue_name, registered, subscription_at, partition_id, partition_name, committed,
        last_offset, lease_id, lease_end, lease_expires_at, attempts, retry_at, last_claimed_at, pending_since,
        committed_at, consumed)
    ORDER BY u.consumer_group COLLATE "C", u.queue_name COLLATE "C", u.partition_name COLLATE "C"
$$;
COMMENT ON FUNCTION queen.group_cursors(text, text) IS
  'Every cursor of a group (or of all groups) with its lag, live lease and attempts, for introspection.';
