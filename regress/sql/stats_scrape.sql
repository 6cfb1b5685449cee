-- The database's part of a Prometheus scrape (sql/procedures/91_metrics_scrape.sql): the
-- snapshot gauges of a known state per (queue, group), the cluster totals, and the codec row.
SET client_min_messages = warning;
\set VERBOSITY terse

CREATE FUNCTION pg_temp.push(part text, txid text) RETURNS bigint LANGUAGE sql AS $$
    SELECT msg_offset FROM queen.push(ARRAY['ms_q'], ARRAY[part], ARRAY[1], ARRAY[txid],
                                      ARRAY[NULL::uuid], ARRAY[NULL::text], ARRAY['{}'])
$$;
CREATE FUNCTION pg_temp.ack(part text, txid text, status text) RETURNS boolean LANGUAGE sql AS $$
    SELECT success FROM queen.ack('g', ARRAY[(SELECT p.id FROM queen.log_partitions p JOIN queen.queues q
                                               ON q.id = p.queue_id WHERE q.name = 'ms_q' AND p.name = part)],
        ARRAY[txid], ARRAY[NULL]::bigint[], ARRAY[NULL]::uuid[], ARRAY[status], ARRAY[NULL]::text[])
$$;

SELECT queen.configure('ms_q', NULL, NULL, jsonb_build_object('retryDelay', 0)) IS NOT NULL AS configured;
SELECT pg_temp.push('a', 'm1'), pg_temp.push('a', 'm2'), pg_temp.push('a', 'm3'), pg_temp.push('b', 'n1');

-- Rows without a queue: the cluster totals, the codec and the cluster's dead letters (the
-- snapshot of the stats test before this one holds none).
SELECT family, label, label_value FROM queen.metrics_scrape()
 WHERE queue IS NULL ORDER BY family, label_value;

-- g leases a's m1 and m2 and acknowledges m1; dead-letters b's n1.
SELECT span_start, span_end FROM queen.pop('ms_q', 'a', 'g', 2, 1, false, true, NULL);
SELECT pg_temp.ack('a', 'm1', 'completed');
SELECT span_start, span_end FROM queen.pop('ms_q', 'b', 'g', 1, 1, false, true, NULL);
SELECT pg_temp.ack('b', 'n1', 'dlq');
CALL queen.refresh_stats() \gset

-- a: lag 2 (m2 leased, m3 ready); b: consumed by its dead letter.
SELECT family, queue, consumer_group, label, label_value,
       CASE WHEN family LIKE '%seconds' THEN value >= 0 ELSE NULL END AS age_ok,
       CASE WHEN family LIKE '%seconds' THEN NULL ELSE value END AS value
  FROM queen.metrics_scrape()
 WHERE queue = 'ms_q' AND family NOT LIKE 'queen_queue%minute' AND family <> 'queen_queue_pop_lag_seconds'
       AND family <> 'queen_queue_metrics_age_seconds'
 ORDER BY family, consumer_group;
SELECT family, value FROM queen.metrics_scrape() WHERE family IN ('queen_dlq_depth') ORDER BY family;
SELECT count(*) AS snapshot_age_rows FROM queen.metrics_scrape() WHERE family = 'queen_stats_snapshot_age_seconds';

SELECT queen.delete_queue('ms_q');
SELECT count(*) FROM queen.delete_group('g', NULL, true);
-- A deleted queue has no snapshot gauges at once (its newest minute stays for 5 minutes).
SELECT count(*) AS gauges_left FROM queen.metrics_scrape()
 WHERE queue = 'ms_q' AND family NOT LIKE 'queen_queue%minute' AND family NOT IN ('queen_queue_pop_lag_seconds', 'queen_queue_metrics_age_seconds');
