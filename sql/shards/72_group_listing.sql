-- The proxy's hand-written group listing (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/72_group_listing.sql):
-- every shard's group summaries merged into the one-database answer.

-- queen.list_group_summaries: one row per (group, queue), the shards' figures combined: counts
-- and lag added up, the oldest wait and the largest time lag kept, the earliest registration.
CREATE OR REPLACE FUNCTION queen.list_group_summaries(p_scope text DEFAULT NULL)
RETURNS TABLE(consumer_group text, queue_name text, cursors bigint, partitions_with_lag bigint, lag bigint,
              oldest_waiting_at timestamptz, max_time_lag bigint, committed bigint, subscription_mode text,
              subscription_at timestamptz, registered_at timestamptz, members bigint)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        SELECT g.consumer_group, g.queue_name, sum(g.cursors)::bigint, sum(g.partitions_with_lag)::bigint,
               sum(g.lag)::bigint, min(g.oldest_waiting_at), max(g.max_time_lag), sum(g.committed)::bigint,
               min(g.subscription_mode), min(g.subscription_at), min(g.registered_at), sum(g.members)::bigint
          FROM queen_proxy.list_group_summaries_every(p_scope) AS g
         GROUP BY g.consumer_group, g.queue_name
         ORDER BY g.consumer_group COLLATE "C", g.queue_name COLLATE "C";
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.list_group_summaries(text) IS
  'Proxy: group summaries of every shard combined per (group, queue).';
