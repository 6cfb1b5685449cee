-- Consumer-group administration and lease renewal from SQL (sql/procedures/64_group_offsets.sql,
-- 65_group_admin.sql, 66_leases.sql, 67_group_status.sql): a flat checklist. Output is kept
-- free of ids and times (booleans and offsets only).
SET client_min_messages = warning;
\set VERBOSITY terse

SELECT options->>'leaseTime' AS lease_time FROM queen.configure('rg_q', NULL, NULL, '{"retryDelay": 600000}');
-- P1: segment 1..2 (one push), then t1, then segment 3; P2: 1, then t1, then 2..3
SELECT count(*) AS queued FROM queen.push(ARRAY['rg_q','rg_q'], ARRAY['P1','P2'], ARRAY[2,1],
    ARRAY['a1','a2','b1'], ARRAY[NULL,NULL,NULL]::uuid[], ARRAY[NULL,NULL,NULL]::text[], ARRAY['1','2','3']);
SELECT pg_sleep(0.05);
SELECT clock_timestamp() AS t1 \gset
SELECT pg_sleep(0.05);
SELECT count(*) AS queued FROM queen.push(ARRAY['rg_q','rg_q'], ARRAY['P1','P2'], ARRAY[1,2],
    ARRAY['a3','b2','b3'], ARRAY[NULL,NULL,NULL]::uuid[], ARRAY[NULL,NULL,NULL]::text[], ARRAY['4','5','6']);
SELECT p.id AS p1 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
 WHERE q.name = 'rg_q' AND p.name = 'P1' \gset
SELECT p.id AS p2 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
 WHERE q.name = 'rg_q' AND p.name = 'P2' \gset
SELECT created_at AS c1 FROM queen.log_segments WHERE partition_id = :p1 ORDER BY last_offset LIMIT 1 \gset

-- offset_at_time: before everything, between the pushes, exactly at a segment's createdAt
-- (inclusive for seek, exclusive for a subscription start), after everything, NULL
SELECT queen.offset_at_time(:p1, '2000-01-01', true) AS before_all,
       queen.offset_at_time(:p1, :'t1', true) AS p1_at_t1,
       queen.offset_at_time(:p2, :'t1', false) AS p2_at_t1,
       queen.offset_at_time(:p1, :'c1', true) AS at_c1_inclusive,
       queen.offset_at_time(:p1, :'c1', false) AS at_c1_exclusive,
       queen.offset_at_time(:p1, now() + interval '1 day', true) AS after_all,
       queen.offset_at_time(:p1, NULL, false) AS from_beginning;

-- pop for group rg_g: P1 span (0, 2] under a lease
SELECT lease_id AS lease, span_start, span_end
  FROM queen.pop('rg_q', 'P1', 'rg_g', 2, 1, false, true, NULL) LIMIT 1 \gset
SELECT :span_start AS span_start, :span_end AS span_end;

-- extend_lease: extends, never shortens, unknown ids, bad seconds, expired leases
SELECT status, partitions, expires_at > now() + interval '100 seconds' AS long
  FROM queen.extend_lease(:'lease', 120);
SELECT lease_expires_at AS e1 FROM queen.log_consumers WHERE lease_id = :'lease' \gset
SELECT status, partitions, expires_at = :'e1' AS unchanged FROM queen.extend_lease(:'lease', 5);
SELECT status, partitions, expires_at IS NULL AS no_time
  FROM queen.extend_lease('00000000-0000-4000-8000-000000000000', 60);
SELECT * FROM queen.extend_lease(:'lease', 0);
UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second' WHERE lease_id = :'lease';
SELECT status, partitions, expires_at IS NULL AS no_time FROM queen.extend_lease(:'lease', 60);
SELECT count(*) AS still_expired FROM queen.log_consumers WHERE lease_id = :'lease' AND lease_expires_at < now();
UPDATE queen.log_consumers SET lease_expires_at = now() + interval '30 seconds' WHERE lease_id = :'lease';

-- group_cursors: one row per cursor, the live lease shown, lag and pending time
SELECT consumer_group, queue_name, registered, subscription_at IS NULL AS from_beginning, partition_name,
       committed, last_offset, lease_id IS NOT NULL AS leased, lease_end, attempts, retry_at IS NULL AS no_retry,
       pending_since IS NOT NULL AS pending
  FROM queen.group_cursors('rg_g');

-- a failed ack: attempts 1 and a retry delay on P1
SELECT success, lease_released FROM queen.ack('rg_g', ARRAY[:p1]::bigint[], ARRAY['a1'], ARRAY[NULL]::bigint[],
    ARRAY[NULL]::uuid[], ARRAY['failed'], ARRAY['boom']);
SELECT partition_name, committed, attempts, retry_at IS NOT NULL AS retry_pending
  FROM queen.group_cursors('rg_g') WHERE partition_name = 'P1';

-- seek_group to a time: every partition onto its last message at or before t1; attempts
-- and the retry delay reset
SELECT * FROM queen.seek_group('rg_q', 'rg_g', NULL, false, :'t1');
SELECT partition_name, committed, lease_id IS NULL AS free, attempts, retry_at IS NULL AS no_retry
  FROM queen.group_cursors('rg_g');
-- to the end, and backwards to the beginning (replay)
SELECT * FROM queen.seek_group('rg_q', 'rg_g', NULL, true, NULL);
SELECT partition_name, committed FROM queen.group_cursors('rg_g');
SELECT * FROM queen.seek_group('rg_q', 'rg_g', NULL, false, '2000-01-01');
SELECT partition_name, committed FROM queen.group_cursors('rg_g');
-- a live lease is released by a seek; an ack under it no longer resolves
SELECT count(*) AS claimed_segments FROM queen.pop('rg_q', 'P2', 'rg_g', 10, 1, false, true, NULL);
SELECT * FROM queen.seek_group('rg_q', 'rg_g', NULL, false, '2000-01-01');
SELECT partition_name, committed, lease_id IS NULL AS free FROM queen.group_cursors('rg_g');
SELECT success, error FROM queen.ack('rg_g', ARRAY[:p2]::bigint[], ARRAY['b1'], ARRAY[1]::bigint[],
    ARRAY[NULL]::uuid[], ARRAY['completed'], ARRAY[NULL]);
-- one partition to its end
SELECT status, partitions_updated, newest_at IS NOT NULL AS has_newest FROM queen.seek_group('rg_q', 'rg_g', 'P2', true, NULL);
SELECT partition_name, committed FROM queen.group_cursors('rg_g');
-- refusals: unknown queue, partition, group; both or neither target
SELECT * FROM queen.seek_group('rg_none', 'rg_g', NULL, true, NULL);
SELECT * FROM queen.seek_group('rg_q', 'rg_g', 'P9', true, NULL);
SELECT * FROM queen.seek_group('rg_q', 'rg_nobody', NULL, true, NULL);
SELECT * FROM queen.seek_group('rg_q', 'rg_g', NULL, true, now());
SELECT * FROM queen.seek_group('rg_q', 'rg_g', NULL, false, NULL);

-- set_group_subscription: rewrites the start where the group is registered; the future is now
SELECT queues_updated, subscription_at = :'t1' AS at_t1 FROM queen.set_group_subscription('rg_g', :'t1');
SELECT queues_updated, subscription_at <= now() AS clamped
  FROM queen.set_group_subscription('rg_g', now() + interval '1 year');
SELECT queues_updated FROM queen.set_group_subscription('rg_nobody', now());
SELECT * FROM queen.set_group_subscription('rg_g', NULL);
SELECT queues_updated FROM queen.set_group_subscription('rg_g', :'t1');

-- delete_group without metadata: cursors set back to the start (t1), as new
SELECT count(*) AS claimed_segments FROM queen.pop('rg_q', 'P1', 'rg_g', 1, 1, false, true, NULL);
SELECT * FROM queen.delete_group('rg_g', 'rg_q', false);
SELECT partition_name, committed, lease_id IS NULL AS free, subscription_at = :'t1' AS start_kept,
       last_claimed_at IS NOT NULL AS claim_history_kept
  FROM queen.group_cursors('rg_g');
-- with metadata: the group is gone; a group registered on a queue that does not exist yet
-- loses its record too; an unknown group touches nothing
SELECT queen.register_group('rg_later', 'rg_g', NULL);
SELECT * FROM queen.delete_group('rg_g', NULL, true);
SELECT count(*) AS rows_left FROM queen.group_cursors('rg_g');
SELECT count(*) AS records_left FROM queen.consumer_groups WHERE consumer_group = 'rg_g';
SELECT * FROM queen.delete_group('rg_g', NULL, true);
-- the next pop registers the group again, from the beginning
SELECT count(*) > 0 AS delivered FROM queen.pop('rg_q', 'P1', 'rg_g', 10, 1, true, true, NULL);
SELECT partition_name, committed FROM queen.group_cursors('rg_g');

-- retention gaps (retention deletes through queen.delete_segments, which keeps the head):
-- with its first segment gone, P2 seeks to the oldest message still stored;
-- with none left, to its end
SELECT queen.delete_segments(array_agg(partition_id), array_agg(last_offset)) AS deleted
  FROM queen.log_segments WHERE partition_id = :p2 AND first_offset = 1;
SELECT queen.offset_at_time(:p2, '2000-01-01', true) AS oldest_stored,
       queen.offset_at_time(:p2, NULL, false) AS from_beginning;
SELECT queen.delete_segments(array_agg(partition_id), array_agg(last_offset)) AS deleted
  FROM queen.log_segments WHERE partition_id = :p2;
SELECT queen.offset_at_time(:p2, '2000-01-01', true) AS nothing_left;

SELECT queen.delete_queue('rg_q');
SELECT count(*) AS cursors_left FROM queen.log_consumers c WHERE c.consumer_group = 'rg_g';
