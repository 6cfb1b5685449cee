-- The consumer-group answers Queen's tools read (docs/consumer-groups.md): the list, one row
-- per (group, queue) from the stats snapshot (68_stats.sql), and the lagging cursors, read
-- per (queue, group) through log_consumers_ready, so their cost follows the answer.

-- The tenant scope is a new trailing parameter: drop the forms without it.
DROP FUNCTION IF EXISTS queen.list_group_summaries();
DROP FUNCTION IF EXISTS queen.lagging_cursors(integer);

-- queen.list_group_summaries(scope): one row per registered (group, queue) of the tenant scope
-- (sql/procedures/21_tenancy.sql; queue names as it shows them), by group then queue,
-- with the snapshot's counts (zero before the pair's first snapshot; max_time_lag in seconds from
-- the snapshot's oldest waiting message) and the subscription:
-- mode 'all' (from the beginning), 'new' (from the registration) or 'timestamp'; NULL for
-- queue mode; members, the partitions the group has consumed from (queen.cursor_consumed).
CREATE OR REPLACE FUNCTION queen.list_group_summaries(p_scope text DEFAULT NULL)
RETURNS TABLE(consumer_group text, queue_name text, cursors bigint, partitions_with_lag bigint, lag bigint,
              oldest_waiting_at timestamptz, max_time_lag bigint, committed bigint, subscription_mode text,
              subscription_at timestamptz, registered_at timestamptz, members bigint)
LANGUAGE sql STABLE
AS $$
    SELECT g.consumer_group, queen.scoped_queue_name(g.queue_name, p_scope), coalesce(s.cursors, 0), coalesce(s.with_lag, 0), coalesce(s.lag, 0),
           s.oldest, coalesce(floor(extract(epoch FROM now() - s.oldest))::bigint, 0), coalesce(s.committed, 0),
           CASE WHEN g.consumer_group = '__QUEUE_MODE__' THEN NULL
                WHEN g.subscription_at IS NULL THEN 'all'
                WHEN g.subscription_at = g.created_at THEN 'new'
                ELSE 'timestamp' END,
           g.subscription_at, g.created_at, coalesce(s.members, 0)
      FROM queen.consumer_groups g
      LEFT JOIN queen.queues q ON q.name = g.queue_name
      LEFT JOIN (SELECT gs.queue_id, gs.consumer_group, sum(gs.cursors)::bigint AS cursors,
                        sum(gs.partitions_with_lag)::bigint AS with_lag, sum(gs.lag)::bigint AS lag,
                        min(gs.oldest_waiting_at) AS oldest, sum(gs.committed)::bigint AS committed,
                        sum(gs.members)::bigint AS members
                   FROM queen.group_stats gs
                  WHERE gs.snapshot_id = queen.stats_snapshot_id()
                  GROUP BY gs.queue_id, gs.consumer_group) s
        ON s.queue_id = q.id AND s.consumer_group = g.consumer_group
     WHERE queen.in_tenant_scope(queen.queue_key_tenant(g.queue_name), p_scope)
     ORDER BY g.consumer_group COLLATE "C", g.queue_name COLLATE "C"
$$;
COMMENT ON FUNCTION queen.list_group_summaries(text) IS
  'Per registered (group, queue): snapshot counts (members: partitions consumed from) and the subscription, by group then queue.';

-- queen.lagging_cursors(min seconds, scope): every cursor of the tenant scope's queues whose
-- first uncommitted message is older than that (strictly), largest time lag first. The (queue, group) pairs with cursors are found
-- by a skip scan of log_consumers_queue_group (one index descent per pair), and each pair is
-- read through log_consumers_ready up to the threshold: cursors that are not lagging are
-- never visited, so the cost follows the pairs and the answer, not the partitions.
CREATE OR REPLACE FUNCTION queen.lagging_cursors(p_min_seconds integer, p_scope text DEFAULT NULL)
RETURNS TABLE(consumer_group text, queue_name text, partition_name text, partition_id bigint, lease_id uuid,
              offset_lag bigint, time_lag_seconds bigint, oldest_unconsumed_at timestamptz,
              last_consumed_at timestamptz)
LANGUAGE sql STABLE
AS $$
    WITH RECURSIVE pairs AS (
        (SELECT l.queue_id, l.consumer_group FROM queen.log_consumers l
          ORDER BY l.queue_id, l.consumer_group LIMIT 1)
        UNION ALL
        SELECT n.queue_id, n.consumer_group
          FROM pairs pr
         CROSS JOIN LATERAL (SELECT l.queue_id, l.consumer_group FROM queen.log_consumers l
                              WHERE (l.queue_id, l.consumer_group) > (pr.queue_id, pr.consumer_group)
                              ORDER BY l.queue_id, l.consumer_group LIMIT 1) n
    )
    SELECT c.consumer_group, queen.scoped_queue_name(q.name, p_scope), p.name, c.partition_id,
           CASE WHEN c.lease_id IS NOT NULL AND c.lease_expires_at > now() THEN c.lease_id END,
           greatest(h.last_offset - c.committed, 0),
           floor(extract(epoch FROM now() - c.ready_at))::bigint,
           c.ready_at, c.committed_at
      FROM pairs pr
      JOIN queen.queues q ON q.id = pr.queue_id AND queen.in_tenant_scope(q.tenant, p_scope)
      JOIN queen.log_consumers c
        ON c.queue_id = pr.queue_id AND c.consumer_group = pr.consumer_group
       AND c.ready_at IS NOT NULL AND c.ready_at < now() - make_interval(secs => p_min_seconds)
      JOIN queen.log_partitions p ON p.id = c.partition_id
     CROSS JOIN LATERAL queen.partition_head(c.partition_id) h
     ORDER BY c.ready_at, c.consumer_group COLLATE "C", q.name COLLATE "C", p.name COLLATE "C"
$$;
COMMENT ON FUNCTION queen.lagging_cursors(integer, text) IS
  'Cursors whose first uncommitted message is older than the given seconds, largest time lag first.';
