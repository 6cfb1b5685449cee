-- The proxy's hand-written message browser, trace listings and tenant usage (route `custom`
-- in 20_generator.sql): each shard gives its first offset + limit rows in the one-database
-- order, the proxy merges them and cuts the page.

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

-- queen.trace_names: every shard's names merged (counts added up, the latest use kept), most
-- recently used first, one page.
CREATE OR REPLACE FUNCTION queen.trace_names(p_limit integer DEFAULT 50, p_offset integer DEFAULT 0,
                                             p_scope text DEFAULT NULL)
RETURNS TABLE(trace_name text, trace_count bigint, message_count bigint, last_seen timestamptz)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        SELECT t.trace_name, sum(t.trace_count)::bigint, sum(t.message_count)::bigint, max(t.last_seen)
          FROM queen_proxy.trace_names_every(NULL, 0, p_scope) AS t
         GROUP BY t.trace_name
         ORDER BY max(t.last_seen) DESC, t.trace_name COLLATE "C"
         LIMIT p_limit OFFSET p_offset;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.trace_names(integer, integer, text) IS
  'Proxy: trace names of every shard, counts added up, most recently used first.';

-- queen.count_trace_names: the distinct names over every shard.
CREATE OR REPLACE FUNCTION queen.count_trace_names(p_scope text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
AS $$
BEGIN
    RETURN (SELECT count(DISTINCT t.trace_name) FROM queen_proxy.trace_names_every(NULL, 0, p_scope) AS t);
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.count_trace_names(text) IS
  'Proxy: how many distinct trace names the shards hold.';

-- queen.traces_by_name: one page of every shard's traces with that name, oldest first.
CREATE OR REPLACE FUNCTION queen.traces_by_name(p_name text, p_limit integer DEFAULT 100, p_offset integer DEFAULT 0,
                                                p_scope text DEFAULT NULL)
RETURNS TABLE(trace_id uuid, partition_id bigint, transaction_id text, consumer_group text, event_type text,
              data jsonb, trace_names text[], created_at timestamptz, queue text, partition text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        SELECT t.* FROM queen_proxy.traces_by_name_every(p_name, p_limit + p_offset, 0, p_scope) AS t
         ORDER BY t.created_at, t.partition_id, t.trace_id
         LIMIT p_limit OFFSET p_offset;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.traces_by_name(text, integer, integer, text) IS
  'Proxy: one page of every shard''s traces with the name, oldest first.';

-- queen.tenant_usage: per tenant, its queues counted once and every shard's stored bytes.
CREATE OR REPLACE FUNCTION queen.tenant_usage(p_want_bytes boolean DEFAULT false)
RETURNS TABLE(tenant text, queues bigint, stored_bytes bigint)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        WITH bytes AS (SELECT u.tenant, sum(u.stored_bytes) AS stored
                         FROM queen_proxy.tenant_usage_every(p_want_bytes) AS u GROUP BY u.tenant),
             names AS (SELECT n.tenant, count(DISTINCT n.queue_name) AS queues
                         FROM queen_proxy.tenant_queue_names_every() AS n GROUP BY n.tenant)
        SELECT n.tenant, n.queues, coalesce(b.stored, 0)::bigint
          FROM names n LEFT JOIN bytes b ON b.tenant = n.tenant
         ORDER BY n.tenant;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.tenant_usage(boolean) IS
  'Proxy: per tenant, its queues once and every shard''s stored bytes.';
