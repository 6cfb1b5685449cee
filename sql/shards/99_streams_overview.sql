-- The proxy's hand-written stream overview (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/99_streams_overview.sql):
-- every shard's stream queries merged by id.

-- queen.stream_queries_overview: one row per query, its lanes, state and lag added up.
CREATE OR REPLACE FUNCTION queen.stream_queries_overview(p_scope text DEFAULT NULL)
RETURNS TABLE(name text, query_id uuid, source_queue text, sink_queue text, config_hash text,
              created_at timestamptz, updated_at timestamptz, lanes bigint, state_rows bigint,
              state_bytes bigint, source_lag bigint, oldest_pending_at timestamptz, source_time_lag bigint)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        SELECT o.name, o.query_id, min(o.source_queue), min(o.sink_queue), min(o.config_hash), min(o.created_at),
               max(o.updated_at), sum(o.lanes)::bigint, sum(o.state_rows)::bigint, sum(o.state_bytes)::bigint,
               sum(o.source_lag)::bigint, min(o.oldest_pending_at), max(o.source_time_lag)
          FROM queen_proxy.stream_queries_overview_every(p_scope) AS o
         GROUP BY o.name, o.query_id
         ORDER BY o.name COLLATE "C";
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.stream_queries_overview(text) IS
  'Proxy: stream queries with every shard''s lanes, state and lag added up.';
