-- The stats snapshot (sql/procedures/68_stats.sql) and the listings that read it
-- (71_resources.sql): the counts of a known state, the same whatever the page size, and only
-- the newest two snapshots kept.
SET client_min_messages = warning;
\set VERBOSITY terse

CREATE FUNCTION pg_temp.push(part text, txid text) RETURNS bigint LANGUAGE sql AS $$
    SELECT msg_offset FROM queen.push(ARRAY['st_q'], ARRAY[part], ARRAY[1], ARRAY[txid],
                                      ARRAY[NULL::uuid], ARRAY[NULL::text], ARRAY['{}'])
$$;
CREATE FUNCTION pg_temp.ack(part text, txid text, status text) RETURNS boolean LANGUAGE sql AS $$
    SELECT success FROM queen.ack('g', ARRAY[(SELECT p.id FROM queen.log_partitions p JOIN queen.queues q
                                               ON q.id = p.queue_id WHERE q.name = 'st_q' AND p.name = part)],
        ARRAY[txid], ARRAY[NULL]::bigint[], ARRAY[NULL]::uuid[], ARRAY[status], ARRAY[NULL]::text[])
$$;
CREATE FUNCTION pg_temp.counts() RETURNS TABLE(partitions bigint, total bigint, pending bigint, processing bigint,
                                                 completed bigint, dead_letter bigint)
LANGUAGE sql AS $$
    SELECT partitions, total, pending, processing, completed, dead_letter
      FROM queen.list_queues('st_ns', NULL, 10, 0)
$$;

SELECT queen.configure('st_q', 'st_ns', 'st_task', jsonb_build_object('retryDelay', 0)) IS NOT NULL AS configured;
SELECT pg_temp.push('a', 'm1'), pg_temp.push('a', 'm2'), pg_temp.push('a', 'm3'),
       pg_temp.push('b', 'n1'), pg_temp.push('b', 'n2'), pg_temp.push('c', 'k1');

-- Before any snapshot: the queue is listed with zero counts, and the age is -1.
SELECT name, namespace, task, partitions, total FROM queen.list_queues('st_ns', NULL, 10, 0);
SELECT queen.stats_age() AS age_before;

-- g leases a's m1 and m2 and acknowledges m1; dead-letters c's k1; b is untouched.
SELECT span_start, span_end FROM queen.pop('st_q', 'a', 'g', 2, 1, false, true, NULL);
SELECT pg_temp.ack('a', 'm1', 'completed');
SELECT span_start, span_end FROM queen.pop('st_q', 'c', 'g', 1, 1, false, true, NULL);
SELECT pg_temp.ack('c', 'k1', 'dlq');

-- Per partition (live): a: lag 2, one leased, pending 1, completed 1; b: everything pending;
-- c: consumed by its dead letter.
SELECT partition_name, total, pending, processing, completed, dead_letter, newest_at IS NOT NULL AS has_newest,
       oldest_waiting_at IS NOT NULL AS has_oldest
  FROM queen.queue_detail('st_q');
SELECT count(*) AS unknown_queue_rows FROM queen.queue_detail('st_nope');

CALL queen.refresh_stats() \gset
SELECT :'skipped' AS skipped, :snapshot_id = queen.stats_snapshot_id() AS newest;
SELECT queen.stats_age() BETWEEN 0 AND 5 AS fresh;
SELECT * FROM pg_temp.counts();
SELECT consumer_group, sum(cursors) AS cursors, sum(partitions_with_lag) AS with_lag, sum(lag) AS lag,
       sum(ready) AS ready, sum(leased) AS leased, max(max_lag) AS max_lag, sum(committed) AS committed,
       min(oldest_waiting_at) IS NOT NULL AS has_waiting, min(oldest_leased_at) IS NOT NULL AS has_leased,
       sum(dead_letters) AS dead_letters
  FROM queen.group_stats
 WHERE snapshot_id = queen.stats_snapshot_id() AND queue_id = (SELECT id FROM queen.queues WHERE name = 'st_q')
 GROUP BY consumer_group;

-- One partition per page: the same sums.
CALL queen.refresh_stats(1) \gset
SELECT * FROM pg_temp.counts();
SELECT count(DISTINCT page) >= 3 AS paged FROM queen.queue_stats WHERE snapshot_id = queen.stats_snapshot_id();

-- Only this snapshot and the one before it are kept.
CALL queen.refresh_stats() \gset
SELECT count(*) AS snapshots FROM queen.stats_snapshots;
SELECT count(DISTINCT snapshot_id) AS snapshots_with_rows FROM queen.queue_stats;

-- Namespaces and tasks.
SELECT * FROM queen.list_groupings('namespace') WHERE name = 'st_ns';
SELECT * FROM queen.list_groupings('task') WHERE name = 'st_task';
SELECT * FROM queen.list_groupings('other');

-- Filters and paging.
SELECT count(*) AS other_namespace FROM queen.list_queues('st_none', NULL, 10, 0);
SELECT count(*) AS by_task FROM queen.list_queues(NULL, 'st_task', 10, 0);
SELECT count(*) AS past_the_end FROM queen.list_queues('st_ns', NULL, 10, 1);
CALL queen.refresh_stats(0);

SELECT queen.delete_queue('st_q');
SELECT count(*) FROM queen.delete_group('g', NULL, true);
