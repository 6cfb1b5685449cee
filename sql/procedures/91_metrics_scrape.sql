-- What a Prometheus scrape reads from the database (docs/metrics.md): one row per sample of the
-- families that come from the stats snapshot, the cluster's lifetime totals and the newest
-- per-minute queue bucket. Bounded: O(queues × groups) snapshot rows, the one metrics_totals
-- row and the queue_metrics rows of the last 5 minutes; it never reads partitions, cursors,
-- segments or dead letters. The broker caches the answer for 5 s.

-- queen.metrics_scrape(): (family, queue, consumer_group, label, label_value, value) rows; queue
-- and consumer_group are NULL where the family has no such label, label names the family's
-- one other label (NULL without one). The last row, 'codec_extension', is queen_ext's version.
CREATE OR REPLACE FUNCTION queen.metrics_scrape()
RETURNS TABLE(family text, queue text, consumer_group text, label text, label_value text, value double precision)
LANGUAGE sql STABLE
AS $$
    WITH snap AS (
        SELECT queen.stats_snapshot_id() AS id
    ), groups AS (
        SELECT q.name AS queue, g.consumer_group, sum(g.ready) AS ready, sum(g.leased) AS leased,
               sum(g.lag) AS lag, min(g.oldest_waiting_at) AS oldest_waiting_at,
               min(g.oldest_leased_at) AS oldest_leased_at, sum(g.dead_letters) AS dead_letters
          FROM snap
          JOIN queen.group_stats g ON g.snapshot_id = snap.id
          JOIN queen.queues q ON q.id = g.queue_id
         GROUP BY q.name, g.consumer_group
    ), queues AS (
        SELECT q.name AS queue, sum(s.partitions) AS partitions, sum(s.dead_letter) AS dead_letter
          FROM snap
          JOIN queen.queue_stats s ON s.snapshot_id = snap.id
          JOIN queen.queues q ON q.id = s.queue_id
         GROUP BY q.name
    ), newest AS (
        SELECT DISTINCT ON (m.queue_name) m.*
          FROM queen.queue_metrics m
         WHERE m.minute >= now() - interval '5 minutes'
         ORDER BY m.queue_name, m.minute DESC
    )
    SELECT 'queen_queue_messages_ready', g.queue, g.consumer_group, NULL, NULL, g.ready::float8 FROM groups g
    UNION ALL
    SELECT 'queen_queue_messages_leased', g.queue, g.consumer_group, NULL, NULL, g.leased::float8 FROM groups g
    UNION ALL
    SELECT 'queen_consumer_lag_messages', g.queue, g.consumer_group, NULL, NULL, g.lag::float8 FROM groups g
    UNION ALL
    SELECT 'queen_consumer_lag_seconds', g.queue, g.consumer_group, NULL, NULL,
           coalesce(greatest(extract(epoch FROM now() - g.oldest_waiting_at), 0), 0)::float8 FROM groups g
    UNION ALL
    SELECT 'queen_consumer_oldest_unacked_age_seconds', g.queue, g.consumer_group, NULL, NULL,
           coalesce(greatest(extract(epoch FROM now() - g.oldest_leased_at), 0), 0)::float8 FROM groups g
    UNION ALL
    SELECT 'queen_dlq_messages', g.queue, g.consumer_group, NULL, NULL, g.dead_letters::float8 FROM groups g
    UNION ALL
    SELECT 'queen_queue_partitions', q.queue, NULL, NULL, NULL, q.partitions::float8 FROM queues q
    UNION ALL
    SELECT 'queen_dlq_depth_by_queue', q.queue, NULL, NULL, NULL, q.dead_letter::float8 FROM queues q
    UNION ALL
    SELECT 'queen_dlq_depth', NULL, NULL, 'scope', 'cluster', coalesce(sum(q.dead_letter), 0)::float8 FROM queues q
    UNION ALL
    SELECT 'queen_stats_snapshot_age_seconds', NULL, NULL, NULL, NULL,
           greatest(extract(epoch FROM now() - max(s.taken_at)), 0)::float8
      FROM queen.stats_snapshots s WHERE s.taken_at IS NOT NULL HAVING max(s.taken_at) IS NOT NULL
    UNION ALL
    SELECT f.family, NULL, NULL, f.label, f.label_value, f.value::float8
      FROM queen.metrics_totals t,
           LATERAL (VALUES ('queen_cluster_push_requests_total', 'scope', 'cluster', t.push_requests),
                           ('queen_cluster_pop_requests_total', 'scope', 'cluster', t.pop_requests),
                           ('queen_cluster_ack_requests_total', 'scope', 'cluster', t.ack_requests),
                           ('queen_cluster_transactions_total', 'scope', 'cluster', t.transaction_requests),
                           ('queen_cluster_push_messages_total', 'scope', 'cluster', t.push_messages),
                           ('queen_cluster_pop_messages_total', 'scope', 'cluster', t.pop_messages),
                           ('queen_cluster_ack_messages_total', 'scope', 'cluster', t.ack_messages),
                           ('queen_cluster_ack_total', 'result', 'success', t.ack_success),
                           ('queen_cluster_ack_total', 'result', 'failed', t.ack_failed),
                           ('queen_cluster_db_errors_total', 'scope', 'cluster', t.db_errors),
                           ('queen_cluster_dlq_total', 'scope', 'cluster', t.dead_lettered))
                   AS f(family, label, label_value, value)
    UNION ALL
    SELECT f.family, n.queue_name, NULL, f.label, f.label_value, f.value
      FROM newest n,
           LATERAL (VALUES ('queen_queue_pop_messages_per_minute', NULL, NULL, n.pop_messages::float8),
                           ('queen_queue_pop_lag_seconds', 'stat', 'avg',
                            CASE WHEN n.pop_lag_count > 0 THEN n.pop_lag_sum_ms / 1000.0 / n.pop_lag_count ELSE 0 END::float8),
                           ('queen_queue_pop_lag_seconds', 'stat', 'max', n.pop_lag_max_ms / 1000.0::float8),
                           ('queen_queue_push_requests_per_minute', NULL, NULL, n.push_requests::float8),
                           ('queen_queue_push_messages_per_minute', NULL, NULL, n.push_messages::float8),
                           ('queen_queue_pop_empty_per_minute', NULL, NULL, n.pop_empty::float8),
                           ('queen_queue_ack_per_minute', 'result', 'success', n.ack_success::float8),
                           ('queen_queue_ack_per_minute', 'result', 'failed', n.ack_failed::float8),
                           ('queen_queue_transactions_per_minute', NULL, NULL, n.transactions::float8),
                           ('queen_queue_metrics_age_seconds', NULL, NULL,
                            greatest(extract(epoch FROM now() - n.minute), 0)::float8))
                   AS f(family, label, label_value, value)
    UNION ALL
    -- Not a family: the codec path behind queen_build_info's codec label (NULL: no queen_ext).
    SELECT 'codec_extension', NULL, NULL, 'version', queen.codec_extension(), 1
$$;
COMMENT ON FUNCTION queen.metrics_scrape() IS
  'The database-sourced samples of a Prometheus scrape: snapshot gauges, cluster totals, the newest queue minute.';
