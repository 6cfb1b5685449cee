-- The proxy's hand-written PostgreSQL statistics (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/96_postgres_stats.sql).
-- /api/v1/analytics/postgres-stats over shards: every shard database's PostgreSQL statistics
-- merged per object (table, index), as if the queen schema were one database: block reads,
-- hits, tuples, updates and sizes added up and their ratios computed again; the latest vacuum
-- times; the longest-running statements of every shard. A list a shard cuts (its top 10, 15
-- or 20) is merged from those cuts, so an object just below every shard's cut is missing.

-- queen_proxy.hit_ratio(hits, reads): as queen.hit_ratio on the shards.
CREATE OR REPLACE FUNCTION queen_proxy.hit_ratio(p_hits numeric, p_reads numeric)
RETURNS numeric
LANGUAGE sql IMMUTABLE
AS $$ SELECT CASE WHEN coalesce(p_hits, 0) + coalesce(p_reads, 0) > 0
                  THEN round(100.0 * coalesce(p_hits, 0) / (coalesce(p_hits, 0) + coalesce(p_reads, 0)), 2) END $$;
COMMENT ON FUNCTION queen_proxy.hit_ratio IS
  'Hits over hits and reads, as queen.hit_ratio on the shards.';

CREATE OR REPLACE FUNCTION queen.pg_database_cache()
RETURNS TABLE("timestamp" text, database text, "databaseCache.database" text, "databaseCache.diskReads" bigint,
              "databaseCache.cacheHits" bigint, "databaseCache.cacheHitRatio" numeric,
              "bufferConfig.sharedBuffers" text, "bufferConfig.sharedBuffersSize" text,
              "cacheSummary.tables.diskReads" bigint, "cacheSummary.tables.cacheHits" bigint,
              "cacheSummary.tables.hitRatio" numeric, "cacheSummary.indexes.diskReads" bigint,
              "cacheSummary.indexes.cacheHits" bigint, "cacheSummary.indexes.hitRatio" numeric)
LANGUAGE sql
AS $$
    SELECT max(d."timestamp"), string_agg(d.database, ', ' ORDER BY d.database),
           string_agg(d."databaseCache.database", ', ' ORDER BY d.database),
           sum(d."databaseCache.diskReads")::bigint, sum(d."databaseCache.cacheHits")::bigint,
           queen_proxy.hit_ratio(sum(d."databaseCache.cacheHits"), sum(d."databaseCache.diskReads")),
           string_agg(DISTINCT d."bufferConfig.sharedBuffers", ', '),
           string_agg(DISTINCT d."bufferConfig.sharedBuffersSize", ', '),
           sum(d."cacheSummary.tables.diskReads")::bigint, sum(d."cacheSummary.tables.cacheHits")::bigint,
           queen_proxy.hit_ratio(sum(d."cacheSummary.tables.cacheHits"), sum(d."cacheSummary.tables.diskReads")),
           sum(d."cacheSummary.indexes.diskReads")::bigint, sum(d."cacheSummary.indexes.cacheHits")::bigint,
           queen_proxy.hit_ratio(sum(d."cacheSummary.indexes.cacheHits"), sum(d."cacheSummary.indexes.diskReads"))
      FROM queen_proxy.pg_database_cache_every() d
$$;
COMMENT ON FUNCTION queen.pg_database_cache IS
  'Proxy: every shard database''s cache hits and reads added up, the ratio computed again.';

CREATE OR REPLACE FUNCTION queen.pg_table_cache()
RETURNS TABLE(schema text, "table" text, "diskReads" bigint, "cacheHits" bigint, "cacheHitRatio" numeric)
LANGUAGE sql
AS $$
    SELECT t.schema, t."table", sum(t."diskReads")::bigint, sum(t."cacheHits")::bigint,
           queen_proxy.hit_ratio(sum(t."cacheHits"), sum(t."diskReads"))
      FROM queen_proxy.pg_table_cache_every() t
     GROUP BY t.schema, t."table"
     ORDER BY sum(t."diskReads") + sum(t."cacheHits") DESC, t."table"
$$;
COMMENT ON FUNCTION queen.pg_table_cache IS
  'Proxy: each table''s cache hits and reads added up over the shards, the ratio computed again.';

CREATE OR REPLACE FUNCTION queen.pg_index_cache()
RETURNS TABLE(schema text, "table" text, index text, "diskReads" bigint, "cacheHits" bigint, "cacheHitRatio" numeric)
LANGUAGE sql
AS $$
    SELECT i.schema, i."table", i.index, sum(i."diskReads")::bigint, sum(i."cacheHits")::bigint,
           queen_proxy.hit_ratio(sum(i."cacheHits"), sum(i."diskReads"))
      FROM queen_proxy.pg_index_cache_every() i
     GROUP BY i.schema, i."table", i.index
     ORDER BY sum(i."diskReads") + sum(i."cacheHits") DESC, i.index
     LIMIT 20
$$;
COMMENT ON FUNCTION queen.pg_index_cache IS
  'Proxy: each index''s cache hits and reads added up over the shards, the ratio computed again.';

CREATE OR REPLACE FUNCTION queen.pg_dead_tuples()
RETURNS TABLE(schema text, "table" text, "deadTuples" bigint, "liveTuples" bigint, "deadPercentage" numeric,
              "lastVacuum" text, "lastAutovacuum" text)
LANGUAGE sql
AS $$
    SELECT t.schema, t."table", sum(t."deadTuples")::bigint, sum(t."liveTuples")::bigint,
           CASE WHEN sum(t."deadTuples") + sum(t."liveTuples") > 0
                THEN round(100.0 * sum(t."deadTuples") / (sum(t."deadTuples") + sum(t."liveTuples")), 2) END,
           max(t."lastVacuum"), max(t."lastAutovacuum")
      FROM queen_proxy.pg_dead_tuples_every() t
     GROUP BY t.schema, t."table"
     ORDER BY sum(t."deadTuples") DESC, t."table"
     LIMIT 15
$$;
COMMENT ON FUNCTION queen.pg_dead_tuples IS
  'Proxy: each table''s live and dead tuples added up over the shards; the latest vacuum times.';

CREATE OR REPLACE FUNCTION queen.pg_hot_updates()
RETURNS TABLE(schema text, "table" text, "totalUpdates" bigint, "hotUpdates" bigint, "hotUpdatePercentage" numeric)
LANGUAGE sql
AS $$
    SELECT t.schema, t."table", sum(t."totalUpdates")::bigint, sum(t."hotUpdates")::bigint,
           CASE WHEN sum(t."totalUpdates") > 0 THEN round(100.0 * sum(t."hotUpdates") / sum(t."totalUpdates"), 2) END
      FROM queen_proxy.pg_hot_updates_every() t
     GROUP BY t.schema, t."table"
     ORDER BY sum(t."totalUpdates") DESC, t."table"
     LIMIT 15
$$;
COMMENT ON FUNCTION queen.pg_hot_updates IS
  'Proxy: each table''s updates and HOT updates added up over the shards, the ratio computed again.';

-- The longest-running statements of every shard database (a pid is a shard's backend).
CREATE OR REPLACE FUNCTION queen.pg_active_queries(p_every_application boolean)
RETURNS TABLE(pid integer, duration numeric, state text, query text, "waitEventType" text, "waitEvent" text)
LANGUAGE sql STRICT
AS $$
    SELECT * FROM queen_proxy.pg_active_queries_every(p_every_application) a
     ORDER BY a.duration DESC, a.pid
     LIMIT 10
$$;
COMMENT ON FUNCTION queen.pg_active_queries IS
  'Proxy: the longest-running statements of every shard database (a pid is a shard''s backend).';

CREATE OR REPLACE FUNCTION queen.pg_autovacuum_status()
RETURNS TABLE("table" text, "lastAutovacuum" text, "deadTuples" bigint, "autovacuumCount" bigint,
              "autoanalyzeCount" bigint)
LANGUAGE sql
AS $$
    SELECT t."table", max(t."lastAutovacuum"), sum(t."deadTuples")::bigint, sum(t."autovacuumCount")::bigint,
           sum(t."autoanalyzeCount")::bigint
      FROM queen_proxy.pg_autovacuum_status_every() t
     GROUP BY t."table"
     ORDER BY max(t."lastAutovacuum") DESC NULLS LAST, t."table"
     LIMIT 10
$$;
COMMENT ON FUNCTION queen.pg_autovacuum_status IS
  'Proxy: each table''s autovacuum state over the shards: counts added up, the latest times.';

-- Buffered bytes added up; the share of the shards' caches together (each row's cache size is
-- its bytes over its share).
CREATE OR REPLACE FUNCTION queen.pg_buffer_usage()
RETURNS TABLE(object text, "bufferedSize" text, "bufferedBytes" bigint, "percentOfCache" numeric)
LANGUAGE sql
AS $$
    SELECT b.object, pg_size_pretty(sum(b."bufferedBytes")), sum(b."bufferedBytes")::bigint,
           round(100.0 * sum(b."bufferedBytes")
                 / nullif(sum(b."bufferedBytes" * 100.0 / nullif(b."percentOfCache", 0)), 0), 2)
      FROM queen_proxy.pg_buffer_usage_every() b
     GROUP BY b.object
     ORDER BY sum(b."bufferedBytes") DESC, b.object
     LIMIT 20
$$;
COMMENT ON FUNCTION queen.pg_buffer_usage IS
  'Proxy: buffered bytes added up; the share of the shards'' caches together.';

CREATE OR REPLACE FUNCTION queen.pg_table_sizes()
RETURNS TABLE("table" text, "totalSize" text, "totalSizeBytes" bigint, "tableSize" text, "tableSizeBytes" bigint,
              "indexSize" text, "indexSizeBytes" bigint)
LANGUAGE sql
AS $$
    SELECT t."table", pg_size_pretty(sum(t."totalSizeBytes")), sum(t."totalSizeBytes")::bigint,
           pg_size_pretty(sum(t."tableSizeBytes")), sum(t."tableSizeBytes")::bigint,
           pg_size_pretty(sum(t."indexSizeBytes")), sum(t."indexSizeBytes")::bigint
      FROM queen_proxy.pg_table_sizes_every() t
     GROUP BY t."table"
     ORDER BY sum(t."totalSizeBytes") DESC, t."table"
     LIMIT 20
$$;
COMMENT ON FUNCTION queen.pg_table_sizes IS
  'Proxy: each table''s sizes added up over the shards.';
