-- The consumer-group answers Queen's tools read (docs/consumer-groups.md): the list, one row
-- per (group, queue) from the stats snapshot (68_stats.sql), and the lagging cursors, read
-- per (queue, group) through log_consumers_ready, so their cost follows the answer.

-- queen.list_group_summaries gained a column (members): drop an older form where it is installed.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_proc
                WHERE oid = to_regprocedure('queen.list_group_summaries()')
                  AND NOT ('members' = ANY (proargnames))) THEN
        DROP FUNCTION queen.list_group_summaries();
    END IF;
END
$$;

-- queen.list_group_summaries(): one row per registered (group, queue), by group then queue,
-- with the snapshot's counts (zero before the pair's first snapshot; max_time_lag in seconds from
-- the snapshot's oldest waiting message) and the subscription:
-- mode 'all' (from the beginning), 'new' (from the registration) or 'timestamp'; NULL for
-- queue mode; members, the partitions the group has consumed from (queen.cursor_consumed).
CREATE OR REPLACE FUNCTION queen.list_group_summaries()
RETURNS TABLE(consumer_group text, queue_name text, cursors bigint, partitions_with_lag bigint, lag bigint,
              oldest_waiting_at timestamptz, max_time_lag bigint, committed bigint, subscription_mode text,
              subscription_at timestamptz, registered_at timestamptz, members bigint)
LANGUAGE sql STABLE
AS $$
    SELECT g.consumer_group, g.queue_name, coalesce(s.cursors, 0), coalesce(s.with_lag, 0), coalesce(s.lag, 0),
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
     ORDER BY g.consumer_group COLLATE "C", g.queue_name COLLATE "C"
$$;
COMMENT ON FUNCTION queen.list_group_summaries() IS
  'Per registered (group, queue): snapshot counts (members: partitions consumed from) and the subscription, by group then queue.';

-- queen.lagging_cursors(min seconds): every cursor whose first uncommitted message is older
-- than that (strictly), largest time lag first. The (queue, group) pairs with cursors are found
-- by a skip scan of log_consumers_queue_group (one index descent per pair), and each pair is
-- read through log_consumers_ready up to the threshold: cursors that are not lagging are
-- never visited, so the cost follows the pairs and the answer, not the partitions.
CREATE OR REPLACE FUNCTION queen.lagging_cursors(p_min_seconds integer)
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
    SELECT c.consumer_group, q.name, p.name, c.partition_id,
           CASE WHEN c.lease_id IS NOT NULL AND c.lease_expires_at > now() THEN c.lease_id END,
           greatest(h.last_offset - c.committed, 0),
           floor(extract(epoch FROM now() - c.ready_at))::bigint,
           c.ready_at, c.committed_at
      FROM pairs pr
      JOIN queen.queues q ON q.id = pr.queue_id
      JOIN queen.log_consumers c
        ON c.queue_id = pr.queue_id AND c.consumer_group = pr.consumer_group
       AND c.ready_at IS NOT NULL AND c.ready_at < now() - make_interval(secs => p_min_seconds)
      JOIN queen.log_partitions p ON p.id = c.partition_id
     CROSS JOIN LATERAL queen.partition_head(c.partition_id) h
     ORDER BY c.ready_at, c.consumer_group COLLATE "C", q.name COLLATE "C", p.name COLLATE "C"
$$;
COMMENT ON FUNCTION queen.lagging_cursors(integer) IS
  'Cursors whose first uncommitted message is older than the given seconds, largest time lag first.';
