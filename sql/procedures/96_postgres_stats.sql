-- /api/v1/analytics/postgres-stats (docs/status-and-analytics.md): PostgreSQL's own statistics for this
-- database and the queen schema, one function per part of the answer, in the conventions of
-- 94_status.sql (column names are member names). Ratios are percentages, NULL when nothing
-- was read; sizes are pg_size_pretty text with the bytes beside them.

-- queen.hit_ratio(hits, reads): hits as a percentage of all block requests, 2 decimals.
CREATE OR REPLACE FUNCTION queen.hit_ratio(p_hits bigint, p_reads bigint)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN coalesce(p_hits, 0) + coalesce(p_reads, 0) > 0
                  THEN round(100.0 * coalesce(p_hits, 0) / (coalesce(p_hits, 0) + coalesce(p_reads, 0)), 2) END $$;
COMMENT ON FUNCTION queen.hit_ratio(bigint, bigint) IS 'Cache hits as a percentage of block requests; NULL for none.';

CREATE OR REPLACE FUNCTION queen.pg_database_cache()
RETURNS TABLE("timestamp" text, database text, "databaseCache.database" text, "databaseCache.diskReads" bigint,
              "databaseCache.cacheHits" bigint, "databaseCache.cacheHitRatio" numeric,
              "bufferConfig.sharedBuffers" text, "bufferConfig.sharedBuffersSize" text,
              "cacheSummary.tables.diskReads" bigint, "cacheSummary.tables.cacheHits" bigint,
              "cacheSummary.tables.hitRatio" numeric, "cacheSummary.indexes.diskReads" bigint,
              "cacheSummary.indexes.cacheHits" bigint, "cacheSummary.indexes.hitRatio" numeric)
LANGUAGE sql STABLE
AS $$
    SELECT queen.iso_time(now()), d.datname::text, d.datname::text, d.blks_read, d.blks_hit,
           queen.hit_ratio(d.blks_hit, d.blks_read),
           current_setting('shared_buffers'),
           pg_size_pretty((SELECT s.setting::bigint * s.block_size_bytes
                             FROM (SELECT setting, current_setting('block_size')::bigint AS block_size_bytes
                                     FROM pg_settings WHERE name = 'shared_buffers') s)),
           t.reads, t.hits, queen.hit_ratio(t.hits, t.reads), i.reads, i.hits, queen.hit_ratio(i.hits, i.reads)
      FROM pg_stat_database d,
           (SELECT coalesce(sum(heap_blks_read), 0)::bigint AS reads, coalesce(sum(heap_blks_hit), 0)::bigint AS hits
              FROM pg_statio_user_tables WHERE schemaname = 'queen') t,
           (SELECT coalesce(sum(idx_blks_read), 0)::bigint AS reads, coalesce(sum(idx_blks_hit), 0)::bigint AS hits
              FROM pg_statio_user_indexes WHERE schemaname = 'queen') i
     WHERE d.datname = current_database()
$$;
COMMENT ON FUNCTION queen.pg_database_cache() IS 'Database cache, shared buffers and cache summary of the queen schema.';

CREATE OR REPLACE FUNCTION queen.pg_table_cache()
RETURNS TABLE(schema text, "table" text, "diskReads" bigint, "cacheHits" bigint, "cacheHitRatio" numeric)
LANGUAGE sql STABLE
AS $$
    SELECT schemaname::text, relname::text, coalesce(heap_blks_read, 0), coalesce(heap_blks_hit, 0),
           queen.hit_ratio(heap_blks_hit, heap_blks_read)
      FROM pg_statio_user_tables WHERE schemaname = 'queen'
     ORDER BY coalesce(heap_blks_read, 0) + coalesce(heap_blks_hit, 0) DESC, relname
$$;
COMMENT ON FUNCTION queen.pg_table_cache() IS 'Heap cache hits per table of the queen schema.';

CREATE OR REPLACE FUNCTION queen.pg_index_cache()
RETURNS TABLE(schema text, "table" text, index text, "diskReads" bigint, "cacheHits" bigint, "cacheHitRatio" numeric)
LANGUAGE sql STABLE
AS $$
    SELECT schemaname::text, relname::text, indexrelname::text, coalesce(idx_blks_read, 0), coalesce(idx_blks_hit, 0),
           queen.hit_ratio(idx_blks_hit, idx_blks_read)
      FROM pg_statio_user_indexes WHERE schemaname = 'queen'
     ORDER BY coalesce(idx_blks_read, 0) + coalesce(idx_blks_hit, 0) DESC, indexrelname
     LIMIT 20
$$;
COMMENT ON FUNCTION queen.pg_index_cache() IS 'Index cache hits of the 20 busiest indexes of the queen schema.';

CREATE OR REPLACE FUNCTION queen.pg_dead_tuples()
RETURNS TABLE(schema text, "table" text, "deadTuples" bigint, "liveTuples" bigint, "deadPercentage" numeric,
              "lastVacuum" text, "lastAutovacuum" text)
LANGUAGE sql STABLE
AS $$
    SELECT schemaname::text, relname::text, n_dead_tup, n_live_tup,
           CASE WHEN n_dead_tup + n_live_tup > 0 THEN round(100.0 * n_dead_tup / (n_dead_tup + n_live_tup), 2) END,
           queen.iso_time(last_vacuum), queen.iso_time(last_autovacuum)
      FROM pg_stat_user_tables WHERE schemaname = 'queen'
     ORDER BY n_dead_tup DESC, relname
     LIMIT 15
$$;
COMMENT ON FUNCTION queen.pg_dead_tuples() IS 'The 15 tables of the queen schema with the most dead tuples.';

CREATE OR REPLACE FUNCTION queen.pg_hot_updates()
RETURNS TABLE(schema text, "table" text, "totalUpdates" bigint, "hotUpdates" bigint, "hotUpdatePercentage" numeric)
LANGUAGE sql STABLE
AS $$
    SELECT schemaname::text, relname::text, n_tup_upd, n_tup_hot_upd,
           CASE WHEN n_tup_upd > 0 THEN round(100.0 * n_tup_hot_upd / n_tup_upd, 2) END
      FROM pg_stat_user_tables WHERE schemaname = 'queen'
     ORDER BY n_tup_upd DESC, relname
     LIMIT 15
$$;
COMMENT ON FUNCTION queen.pg_hot_updates() IS 'The 15 most updated tables of the queen schema and their HOT share.';

-- queen.pg_active_queries(p_every_application): statements of this database running for over a
-- second. Their text holds the literals of whoever sent them, so only an admin caller sees every
-- application's (true); below admin (false) only the statements of the caller's own
-- application_name (the broker's own connections).
DROP FUNCTION IF EXISTS queen.pg_active_queries();  -- it takes p_every_application
CREATE OR REPLACE FUNCTION queen.pg_active_queries(p_every_application boolean)
RETURNS TABLE(pid integer, duration numeric, state text, query text, "waitEventType" text, "waitEvent" text)
LANGUAGE sql STABLE STRICT
AS $$
    SELECT a.pid, round(extract(epoch FROM now() - a.query_start)::numeric, 2), a.state, left(a.query, 200),
           a.wait_event_type, a.wait_event
      FROM pg_stat_activity a
     WHERE a.datname = current_database() AND a.state IS DISTINCT FROM 'idle' AND a.pid <> pg_backend_pid()
       AND a.query_start < now() - interval '1 second'
       AND (p_every_application OR a.application_name = current_setting('application_name'))
     ORDER BY a.query_start
     LIMIT 10
$$;
COMMENT ON FUNCTION queen.pg_active_queries(boolean) IS
    'Up to 10 statements of this database running for over a second: of every application, or only of the caller''s application_name.';

CREATE OR REPLACE FUNCTION queen.pg_autovacuum_status()
RETURNS TABLE("table" text, "lastAutovacuum" text, "deadTuples" bigint, "autovacuumCount" bigint,
              "autoanalyzeCount" bigint)
LANGUAGE sql STABLE
AS $$
    SELECT relname::text, queen.iso_time(last_autovacuum), n_dead_tup, autovacuum_count, autoanalyze_count
      FROM pg_stat_user_tables WHERE schemaname = 'queen'
     ORDER BY last_autovacuum DESC NULLS LAST, relname
     LIMIT 10
$$;
COMMENT ON FUNCTION queen.pg_autovacuum_status() IS 'Autovacuum of the 10 tables of the queen schema vacuumed last.';

-- Empty without the pg_buffercache extension.
CREATE OR REPLACE FUNCTION queen.pg_buffer_usage()
RETURNS TABLE(object text, "bufferedSize" text, "bufferedBytes" bigint, "percentOfCache" numeric)
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_buffercache') THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE $q$
        SELECT c.relname::text, pg_size_pretty(count(*) * current_setting('block_size')::bigint),
               count(*) * current_setting('block_size')::bigint,
               round(100.0 * count(*) / current_setting('shared_buffers')::bigint, 2)
          FROM pg_buffercache b
          JOIN pg_class c ON pg_relation_filenode(c.oid) = b.relfilenode
          JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'queen'
         WHERE b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
         GROUP BY c.relname ORDER BY count(*) DESC LIMIT 20 $q$;
END;
$$;
COMMENT ON FUNCTION queen.pg_buffer_usage() IS 'Shared buffers held by queen relations (needs pg_buffercache).';

CREATE OR REPLACE FUNCTION queen.pg_table_sizes()
RETURNS TABLE("table" text, "totalSize" text, "totalSizeBytes" bigint, "tableSize" text, "tableSizeBytes" bigint,
              "indexSize" text, "indexSizeBytes" bigint)
LANGUAGE sql STABLE
AS $$
    SELECT c.relname::text, pg_size_pretty(pg_total_relation_size(c.oid)), pg_total_relation_size(c.oid),
           pg_size_pretty(pg_table_size(c.oid)), pg_table_size(c.oid), pg_size_pretty(pg_indexes_size(c.oid)),
           pg_indexes_size(c.oid)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'queen' AND c.relkind = 'r'
     ORDER BY pg_total_relation_size(c.oid) DESC, c.relname
     LIMIT 20
$$;
COMMENT ON FUNCTION queen.pg_table_sizes() IS 'The 20 largest tables of the queen schema with their sizes.';
