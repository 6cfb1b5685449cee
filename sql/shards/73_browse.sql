-- The proxy's hand-written message browser (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/73_browse.sql):
-- each shard gives its first offset + limit rows in the one-database order, the proxy merges
-- them and cuts the page.

-- queen.browse_mode: queue mode present, and the distinct named groups, over every shard's
-- cursors of these partitions.
CREATE OR REPLACE FUNCTION queen.browse_mode(p_partition_ids bigint[])
RETURNS TABLE(has_queue_mode boolean, bus_groups_count integer)
LANGUAGE plpgsql
AS $$
BEGIN
    RETURN QUERY
        SELECT coalesce(bool_or(g.consumer_group = '__QUEUE_MODE__'), false),
               (count(DISTINCT g.consumer_group) FILTER (WHERE g.consumer_group <> '__QUEUE_MODE__'))::integer
          FROM queen_proxy.partition_groups_every(p_partition_ids) AS g;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.browse_mode(bigint[]) IS
  'Proxy: queue mode and distinct named groups over every shard''s cursors of the partitions.';

-- queen.browse_messages: newest first over every shard (created_at, then partition id and
-- offset descending). Where a shard cannot decode a segment (zstd without queen_ext there),
-- only the segment's first row carries its body; a page cut inside such a segment shows the
-- rest of it without payloads.
CREATE OR REPLACE FUNCTION queen.browse_messages(
    p_queue text, p_partition text, p_namespace text, p_task text, p_status text, p_group text,
    p_from timestamptz, p_to timestamptz, p_limit integer, p_offset integer, p_scope text DEFAULT NULL)
RETURNS TABLE(partition_id bigint, msg_offset bigint, queue text, partition text, namespace text, task text,
              queue_priority integer, created_at timestamptz, status text, queue_status text,
              consumed_by integer, total_groups integer, lease_expires_at timestamptz,
              transaction_id text, trace_id uuid, producer_sub text, seg_first bigint, seg_body bytea)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        SELECT b.* FROM queen_proxy.browse_messages_every(p_queue, p_partition, p_namespace, p_task, p_status, p_group,
                                                          p_from, p_to, p_limit + p_offset, 0, p_scope) AS b
         ORDER BY b.created_at DESC, b.partition_id DESC, b.msg_offset DESC
         LIMIT p_limit OFFSET p_offset;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.browse_messages(text, text, text, text, text, text, timestamptz, timestamptz, integer, integer,
                                          text) IS
  'Proxy: one page of every shard''s messages, newest first.';
