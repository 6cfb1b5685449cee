-- The dashboard's view of streams (docs/streams.md, "The dashboard's view";
-- GET /api/v1/resources/streams): one row per registered query with its lanes, the size of its
-- state and how far its consumer group `streams.<name>` is behind on the source queue.
-- Source lag is the lag of docs/operator-routes.md ("Counts"), head(p) − committed per source
-- partition (queen.partition_last_offset, as queen.cursor_counts reads it), summed; a partition
-- where the group has no cursor yet counts from offset 0.
-- Reads only; takes no locks. Computed live, per query: a count of its lanes, a scan of its
-- state rows (one visible row per live key), and per source partition one backward step on
-- the segment index and one lookup of the group's cursor, newest version first.

-- queen.stream_queries_overview(scope): every registered query of the tenant scope
-- (sql/procedures/21_tenancy.sql; its name and queues as the scope shows them), by name (byte
-- order): its row
-- fields; lanes (stream_lanes rows); state_rows and state_bytes (sum of pg_column_size(value)
-- + octet_length(key)) of its stream_state rows; source_lag, the messages of the source queue
-- the group streams.<name> has not committed (0 when the source queue does not exist);
-- oldest_pending_at, the createdAt of the oldest of them (NULL when there is none), and
-- source_time_lag, its age in whole seconds (0 when there is none).
DROP FUNCTION IF EXISTS queen.stream_queries_overview();  -- it gained the tenant scope
CREATE OR REPLACE FUNCTION queen.stream_queries_overview(p_scope text DEFAULT NULL)
RETURNS TABLE(name text, query_id uuid, source_queue text, sink_queue text, config_hash text,
              created_at timestamptz, updated_at timestamptz, lanes bigint, state_rows bigint,
              state_bytes bigint, source_lag bigint, oldest_pending_at timestamptz, source_time_lag bigint)
LANGUAGE sql STABLE
-- The ordered scan of each cursor's key, newest version first (51_cursor_versions.sql): a
-- bitmap scan would visit every version a held snapshot keeps. One call per request, so the
-- plan this setting costs (no inlining) is made once per request.
SET enable_bitmapscan = off
AS $$
    SELECT queen.scoped_queue_name(sq.name, p_scope), sq.id, queen.scoped_queue_name(sq.source_queue, p_scope),
           queen.scoped_queue_name(sq.sink_queue, p_scope), sq.config_hash, sq.created_at, sq.updated_at,
           l.lanes, s.state_rows, s.state_bytes, coalesce(g.lag, 0), g.oldest,
           coalesce(floor(extract(epoch FROM now() - g.oldest))::bigint, 0)
      FROM queen.stream_queries sq
     CROSS JOIN LATERAL (SELECT count(*) AS lanes FROM queen.stream_lanes sl WHERE sl.query_id = sq.id) l
     CROSS JOIN LATERAL (SELECT count(*) AS state_rows,
                                coalesce(sum(pg_column_size(st.value) + octet_length(st.key)), 0)::bigint AS state_bytes
                           FROM queen.stream_state st WHERE st.query_id = sq.id) s
      LEFT JOIN LATERAL (
        SELECT sum(greatest(h.last_offset - c.committed, 0))::bigint AS lag,
               min(CASE WHEN h.last_offset > c.committed
                        THEN coalesce(c.ready_at, queen.cursor_ready_at(p.id, c.committed)) END) AS oldest
          FROM queen.queues q
          JOIN queen.log_partitions p ON p.queue_id = q.id
         CROSS JOIN LATERAL (SELECT coalesce(queen.partition_last_offset(p.id), 0) AS last_offset) h
          LEFT JOIN LATERAL (SELECT lc.committed, lc.ready_at FROM queen.log_consumers lc
                              WHERE lc.partition_id = p.id
                                AND lc.consumer_group = 'streams.' || queen.queue_local_name(sq.name)
                              ORDER BY lc.version DESC LIMIT 1) cur ON true
         CROSS JOIN LATERAL (SELECT coalesce(cur.committed, 0) AS committed, cur.ready_at) c
         WHERE q.name = sq.source_queue) g ON true
     WHERE queen.in_tenant_scope(queen.queue_key_tenant(sq.name), p_scope)
     ORDER BY sq.name COLLATE "C"
$$;
COMMENT ON FUNCTION queen.stream_queries_overview(text) IS
  'Every stream query by name with its lanes, state rows and bytes, and its group''s lag on the source queue.';
