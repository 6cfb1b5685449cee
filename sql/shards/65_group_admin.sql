-- The proxy's hand-written group seek and delete (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/65_group_admin.sql):
-- each shard holds the cursors of its partitions; these run on every shard, or on one.

-- queen.seek_group: one partition's seek on its shard; a queue's seek on every shard. 'ok'
-- when any shard moved a cursor (the counts added up), else the shards' own refusal.
CREATE OR REPLACE FUNCTION queen.seek_group(
    p_queue text, p_group text, p_partition text, p_to_end boolean, p_at timestamptz)
RETURNS TABLE(status text, partitions_updated integer, newest_at timestamptz)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    IF p_partition IS NOT NULL THEN
        RETURN QUERY SELECT * FROM queen_proxy.seek_group(queen.partition_hash(p_queue, p_partition), p_queue, p_group,
                                                          p_partition, p_to_end, p_at);
        RETURN;
    END IF;
    RETURN QUERY
        SELECT CASE WHEN bool_or(s.status = 'ok') THEN 'ok' ELSE min(s.status) END,
               coalesce(sum(s.partitions_updated) FILTER (WHERE s.status = 'ok'), 0)::integer,
               max(s.newest_at)
          FROM queen_proxy.seek_group_on_all(p_queue, p_group, p_partition, p_to_end, p_at) AS s;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.seek_group(text, text, text, boolean, timestamptz) IS
  'Proxy: a partition''s seek on its shard, a queue''s on every shard, answers merged.';

-- queen.delete_group: on every shard; one row per queue, the shards' counts added up. A deleted
-- registration leaves the proxy's cache too, so the next pop registers the group everywhere.
CREATE OR REPLACE FUNCTION queen.delete_group(p_group text, p_queue text, p_delete_metadata boolean,
                                              p_scope text DEFAULT NULL)
RETURNS TABLE(queue_name text, deleted_partitions integer, metadata_deleted boolean)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    IF p_delete_metadata THEN
        DELETE FROM queen_proxy.registered_groups r
         WHERE r.consumer_group = p_group AND (p_queue IS NULL OR r.queue_name = p_queue);
    END IF;
    RETURN QUERY
        SELECT d.queue_name, sum(d.deleted_partitions)::integer, bool_or(d.metadata_deleted)
          FROM queen_proxy.delete_group_on_all(p_group, p_queue, p_delete_metadata, p_scope) AS d
         GROUP BY d.queue_name
         ORDER BY d.queue_name COLLATE "C";
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.delete_group(text, text, boolean, text) IS
  'Proxy: a group deleted on every shard; one row per queue, counts added up.';
