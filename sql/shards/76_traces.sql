-- The proxy's hand-written trace listings (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/76_traces.sql):
-- each shard gives its first offset + limit rows in the one-database order, the proxy merges
-- them and cuts the page.

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
