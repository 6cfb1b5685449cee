-- log_consumers.ready_at (sql/procedures/52_cursor_ready.sql): after every kind of change it
-- equals the createdAt of the cursor's oldest waiting message (NULL when none), and pops
-- claim the partition whose oldest waiting message is oldest.
SET client_min_messages = warning;
\set VERBOSITY terse

CREATE FUNCTION pg_temp.wrong_ready() RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM queen.log_consumers lc
     WHERE lc.ready_at IS DISTINCT FROM queen.cursor_ready_at(lc.partition_id, lc.committed)
$$;
CREATE FUNCTION pg_temp.push(part text, txid text) RETURNS bigint LANGUAGE sql AS $$
    SELECT msg_offset FROM queen.push(ARRAY['ready_q'], ARRAY[part], ARRAY[1], ARRAY[txid],
                                      ARRAY[NULL::uuid], ARRAY[NULL::text], ARRAY['{}'])
$$;

-- three partitions, pushed in the order b, a, c: a group gets them oldest first
-- (c is created first, empty, so that its id is the smallest: the order below is by time)
SELECT queen.ensure_partition(queen.ensure_queue('ready_q'), 'c') > 0 AS created;
SELECT pg_temp.push('b', 'b1');
SELECT pg_temp.push('a', 'a1');
SELECT pg_temp.push('c', 'c1');
SELECT count(*) AS cursors_before_any_pop FROM queen.log_consumers;
SELECT partition_name, span_start, span_end FROM queen.pop('ready_q', NULL, 'g', 10, 1, false, true, NULL);
SELECT partition_name, span_start, span_end FROM queen.pop('ready_q', NULL, 'g', 10, 1, false, true, NULL);
SELECT partition_name, span_start, span_end FROM queen.pop('ready_q', NULL, 'g', 10, 1, false, true, NULL);
SELECT p.name, lc.committed, lc.ready_at IS NOT NULL AS ready, lc.lease_id IS NOT NULL AS leased
  FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id ORDER BY p.name;
SELECT pg_temp.wrong_ready() AS wrong;

-- acks that commit everything clear ready_at; a later push sets it again
SELECT item, success FROM queen.ack('g',
    (SELECT array_agg(id ORDER BY name) FROM queen.log_partitions WHERE name IN ('a', 'b')),
    ARRAY['a1', 'b1'], ARRAY[NULL, NULL]::bigint[], ARRAY[NULL, NULL]::uuid[],
    ARRAY['completed', 'completed'], ARRAY[NULL, NULL]::text[]);
SELECT p.name, lc.committed, lc.ready_at IS NOT NULL AS ready
  FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id ORDER BY p.name;
SELECT pg_temp.push('a', 'a2');
SELECT p.name, lc.ready_at IS NOT NULL AS ready
  FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id ORDER BY p.name;
SELECT pg_temp.wrong_ready() AS wrong;

-- a retry puts the head back: ready again, with its own (old) createdAt
SELECT item, success FROM queen.ack('g', (SELECT array_agg(id) FROM queen.log_partitions WHERE name = 'c'),
    ARRAY['c1'], ARRAY[NULL]::bigint[], ARRAY[NULL]::uuid[], ARRAY['retry'], ARRAY[NULL]::text[]);
SELECT pg_temp.wrong_ready() AS wrong;

-- a new group registered on its first pop, from the beginning: every partition is ready
SELECT count(*) AS segments FROM queen.pop('ready_q', NULL, 'late', 1, 1, false, true, NULL);
SELECT lc.consumer_group, count(*) FILTER (WHERE lc.ready_at IS NOT NULL) AS ready
  FROM queen.log_consumers lc GROUP BY 1 ORDER BY 1;
SELECT pg_temp.wrong_ready() AS wrong;

-- seek to the end: nothing waits
SELECT status FROM queen.seek_group('ready_q', 'late', NULL, true, NULL);
SELECT count(*) FILTER (WHERE ready_at IS NOT NULL) AS ready_after_seek
  FROM queen.log_consumers WHERE consumer_group = 'late';
SELECT pg_temp.wrong_ready() AS wrong;

-- housekeeping repairs a cursor whose ready_at was lost
UPDATE queen.log_consumers SET ready_at = NULL WHERE consumer_group = 'g';
SELECT queen.run_housekeeping(0, 999999999) IS NOT NULL AS ran;
SELECT pg_temp.wrong_ready() AS wrong;

SELECT queen.delete_queue('ready_q') AS deleted;
