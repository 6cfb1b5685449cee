-- The proxy's hand-written Prometheus scrape (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/91_metrics_scrape.sql):
-- every shard's counts of its own partitions added up.

-- A Prometheus scrape's database samples: every shard's, one sample per series: ages and lags
-- in seconds the largest (the oldest), everything else added up; the codec path the one every
-- shard has (NULL when one lacks queen_ext).
CREATE OR REPLACE FUNCTION queen.metrics_scrape()
RETURNS TABLE(family text, queue text, consumer_group text, label text, label_value text, value double precision)
LANGUAGE sql
AS $$
    WITH rows AS (SELECT * FROM queen_proxy.metrics_scrape_every())
    SELECT r.family, r.queue, r.consumer_group, r.label, r.label_value,
           CASE WHEN r.family IN ('queen_consumer_lag_seconds', 'queen_consumer_oldest_unacked_age_seconds',
                                  'queen_stats_snapshot_age_seconds', 'queen_queue_pop_lag_seconds')
                THEN max(r.value)
                WHEN r.family = 'queen_queue_metrics_age_seconds' THEN min(r.value)
                ELSE sum(r.value) END
      FROM rows r
     WHERE r.family <> 'codec_extension'
     GROUP BY r.family, r.queue, r.consumer_group, r.label, r.label_value
    UNION ALL
    SELECT 'codec_extension', NULL, NULL, 'version',
           CASE WHEN bool_and(r.label_value IS NOT NULL) THEN min(r.label_value) END, 1
      FROM rows r
     WHERE r.family = 'codec_extension'
$$;
COMMENT ON FUNCTION queen.metrics_scrape IS
  'Proxy: a Prometheus scrape''s database samples: every shard''s, one sample per series: ages and lags in seconds the largest (the oldest), everything else added up.';
