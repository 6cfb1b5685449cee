-- The proxy's hand-written group cursor listing (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/67_group_status.sql):
-- every shard's cursors merged into the one-database answer.

-- queen.group_cursors: every shard's cursors, in the one-database order; a (group, queue)
-- registered without cursors shows once, and only when no shard has a cursor for it.
CREATE OR REPLACE FUNCTION queen.group_cursors(p_group text, p_scope text DEFAULT NULL)
RETURNS TABLE(consumer_group text, queue_name text, registered boolean, subscription_at timestamptz,
              partition_id bigint, partition_name text, committed bigint, last_offset bigint,
              lease_id uuid, lease_end bigint, lease_expires_at timestamptz, attempts integer,
              retry_at timestamptz, last_claimed_at timestamptz, pending_since timestamptz,
              committed_at timestamptz, consumed boolean)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        WITH rows AS (SELECT * FROM queen_proxy.group_cursors_every(p_group, p_scope))
        SELECT u.* FROM (
            SELECT r.* FROM rows r WHERE r.partition_id IS NOT NULL
            UNION ALL
            SELECT DISTINCT ON (r.consumer_group, r.queue_name) r.*
              FROM rows r
             WHERE r.partition_id IS NULL
               AND NOT EXISTS (SELECT 1 FROM rows c WHERE c.partition_id IS NOT NULL
                                  AND c.consumer_group = r.consumer_group AND c.queue_name = r.queue_name)) u
        ORDER BY u.consumer_group COLLATE "C", u.queue_name COLLATE "C", u.partition_name COLLATE "C";
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.group_cursors(text, text) IS
  'Proxy: every shard''s cursors of a group (or all groups), a registration without cursors once.';
