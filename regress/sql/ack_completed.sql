-- queen.ack of completions only takes the set-based queen.ack_completed; any other status
-- takes the walk. Differential: every case is played on two partitions with the same
-- history, one acked with completions only (fast), the other with the same acks plus one
-- 'retry' for a partition that does not exist (walk; that extra ack is unresolvable and
-- touches nothing). Answers and cursors must be the same.
SET client_min_messages = warning;
\set VERBOSITY terse

SELECT queue_id > 0 AS created FROM queen.configure('acks', NULL, NULL, '{"retryDelay": 0, "leaseTime": 300}');

-- n messages m1..mn into a partition; its id
CREATE FUNCTION pg_temp.fill(p_part text, p_n int) RETURNS bigint LANGUAGE sql AS $$
    SELECT max(partition_id) FROM queen.push(ARRAY['acks'], ARRAY[p_part], ARRAY[p_n],
        (SELECT array_agg('m' || g ORDER BY g) FROM generate_series(1, p_n) g),
        array_fill(NULL::uuid, ARRAY[p_n]), array_fill(NULL::text, ARRAY[p_n]),
        array_fill('{"v":1}'::text, ARRAY[p_n]))
$$;
-- a leased pop of up to p_batch messages of a partition for group g: the span end
CREATE FUNCTION pg_temp.take(p_part text, p_batch int) RETURNS bigint LANGUAGE sql AS $$
    SELECT max(span_end) FROM queen.pop('acks', p_part, 'g', p_batch, 1, false, true, NULL)
$$;
-- acks of one partition for group g, fast (completions only) or walk (plus one retry elsewhere)
CREATE FUNCTION pg_temp.acks(p_pid bigint, p_txids text[], p_offsets bigint[], p_lease uuid, p_walk boolean)
RETURNS TABLE(item int, success boolean, msg_offset bigint, noop boolean, dlq boolean, lease_released boolean, error text)
LANGUAGE sql AS $$
    SELECT a.item, a.success, a.msg_offset, a.noop, a.dlq, a.lease_released, a.error
      FROM queen.ack('g',
             array_fill(p_pid, ARRAY[cardinality(p_txids)]) || CASE WHEN p_walk THEN ARRAY[-1::bigint] ELSE '{}' END,
             p_txids || CASE WHEN p_walk THEN ARRAY['nowhere'] ELSE '{}' END,
             p_offsets || CASE WHEN p_walk THEN ARRAY[NULL::bigint] ELSE '{}' END,
             array_fill(p_lease, ARRAY[cardinality(p_txids)]) || CASE WHEN p_walk THEN ARRAY[NULL::uuid] ELSE '{}' END,
             array_fill('completed'::text, ARRAY[cardinality(p_txids)]) || CASE WHEN p_walk THEN ARRAY['retry'] ELSE '{}' END,
             array_fill(NULL::text, ARRAY[cardinality(p_txids) + CASE WHEN p_walk THEN 1 ELSE 0 END])) a
     WHERE a.item <= cardinality(p_txids)
$$;
-- a case: the fast answers, whether the walk answered the same, whether the cursors agree
CREATE FUNCTION pg_temp.both(p_fast bigint, p_walk bigint, p_txids text[], p_offsets bigint[], p_lease uuid)
RETURNS TABLE(item int, success boolean, msg_offset bigint, noop boolean, lease_released boolean, error text,
              same_answer boolean, same_cursor boolean)
LANGUAGE plpgsql AS $$
BEGIN
    CREATE TEMP TABLE IF NOT EXISTS fast_answers AS SELECT * FROM pg_temp.acks(0, '{}', '{}', NULL, false) WITH NO DATA;
    CREATE TEMP TABLE IF NOT EXISTS walk_answers AS SELECT * FROM pg_temp.acks(0, '{}', '{}', NULL, false) WITH NO DATA;
    TRUNCATE fast_answers, walk_answers;
    INSERT INTO fast_answers SELECT * FROM pg_temp.acks(p_fast, p_txids, p_offsets, p_lease, false);
    INSERT INTO walk_answers SELECT * FROM pg_temp.acks(p_walk, p_txids, p_offsets, p_lease, true);
    RETURN QUERY
        SELECT f.item, f.success, f.msg_offset, f.noop, f.lease_released, f.error,
               (f.success, f.msg_offset, f.noop, f.dlq, f.lease_released, f.error)
                 IS NOT DISTINCT FROM (w.success, w.msg_offset, w.noop, w.dlq, w.lease_released, w.error),
               (SELECT (cf.committed, cf.lease_id IS NULL, cf.lease_end, cf.attempts, cf.attempts_offset, cf.lease_counted, cf.retry_at IS NULL)
                       IS NOT DISTINCT FROM
                       (cw.committed, cw.lease_id IS NULL, cw.lease_end, cw.attempts, cw.attempts_offset, cw.lease_counted, cw.retry_at IS NULL)
                  FROM queen.log_consumers cf, queen.log_consumers cw
                 WHERE cf.partition_id = p_fast AND cf.consumer_group = 'g'
                   AND cw.partition_id = p_walk AND cw.consumer_group = 'g')
          FROM fast_answers f FULL JOIN walk_answers w ON w.item = f.item
         ORDER BY f.item;
END;
$$;

-- 1. the whole span (0, 3] by transaction id: the cursor moves to 3, the lease is released
SELECT pg_temp.fill('f1', 5) AS f1, pg_temp.fill('w1', 5) AS w1 \gset
SELECT pg_temp.take('f1', 3), pg_temp.take('w1', 3);
SELECT * FROM pg_temp.both(:f1, :w1, ARRAY['m1','m2','m3'], ARRAY[NULL,NULL,NULL]::bigint[], NULL);
SELECT committed, lease_id IS NULL AS free FROM queen.log_consumers WHERE partition_id = :f1;

-- 2. part of the span, out of order (3 then 1 of (0, 4]): cumulative to 3, lease kept
SELECT pg_temp.fill('f2', 5) AS f2, pg_temp.fill('w2', 5) AS w2 \gset
SELECT pg_temp.take('f2', 4), pg_temp.take('w2', 4);
SELECT * FROM pg_temp.both(:f2, :w2, ARRAY['m3','m1'], ARRAY[NULL,NULL]::bigint[], NULL);
SELECT committed, lease_id IS NULL AS free, lease_end FROM queen.log_consumers WHERE partition_id = :f2;
-- then the rest, by offset, with a duplicate and one already committed (noop)
SELECT * FROM pg_temp.both(:f2, :w2, ARRAY['m4','m4','m2'], ARRAY[4,4,2]::bigint[], NULL);

-- 3. a lease id that is not the live one, and a message past the span: unresolvable
SELECT pg_temp.fill('f3', 5) AS f3, pg_temp.fill('w3', 5) AS w3 \gset
SELECT pg_temp.take('f3', 2), pg_temp.take('w3', 2);
SELECT * FROM pg_temp.both(:f3, :w3, ARRAY['m1'], ARRAY[NULL]::bigint[], '00000000-0000-0000-0000-000000000001');
SELECT * FROM pg_temp.both(:f3, :w3, ARRAY['m5','m2','nope'], ARRAY[NULL,NULL,NULL]::bigint[], NULL);

-- 4. no live lease: nothing resolves but what is committed
SELECT pg_temp.fill('f4', 3) AS f4, pg_temp.fill('w4', 3) AS w4 \gset
SELECT pg_temp.take('f4', 3), pg_temp.take('w4', 3);
SELECT * FROM pg_temp.both(:f4, :w4, ARRAY['m1'], ARRAY[NULL]::bigint[], NULL);
UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second' WHERE partition_id IN (:f4, :w4);
SELECT * FROM pg_temp.both(:f4, :w4, ARRAY['m1','m2'], ARRAY[NULL,NULL]::bigint[], NULL);

-- 5. attempts recorded by a failed ack are forgotten once the cursor passes them
SELECT pg_temp.fill('f5', 3) AS f5, pg_temp.fill('w5', 3) AS w5 \gset
SELECT pg_temp.take('f5', 3), pg_temp.take('w5', 3);
SELECT count(*) FROM queen.ack('g', ARRAY[:f5,:w5]::bigint[], ARRAY['m2','m2'], ARRAY[NULL,NULL]::bigint[],
                               ARRAY[NULL,NULL]::uuid[], ARRAY['failed','failed'], ARRAY['x','x']);
SELECT committed, attempts, attempts_offset FROM queen.log_consumers WHERE partition_id = :f5;
SELECT pg_temp.take('f5', 3), pg_temp.take('w5', 3);
SELECT * FROM pg_temp.both(:f5, :w5, ARRAY['m3'], ARRAY[NULL]::bigint[], NULL);
SELECT committed, attempts, attempts_offset, lease_id IS NULL AS free FROM queen.log_consumers WHERE partition_id = :f5;

-- 6. a partition the group has no cursor on, and an empty call
SELECT item, success, msg_offset, lease_released, error, queue_name
  FROM queen.ack('nobody', ARRAY[:f1]::bigint[], ARRAY['m1'], ARRAY[NULL]::bigint[], ARRAY[NULL]::uuid[],
                 ARRAY['completed'], ARRAY[NULL]);
SELECT count(*) FROM queen.ack('g', '{}', '{}', '{}', '{}', '{}', '{}');

-- 7. many partitions in one call (cursors locked in partition order), queue name answered
SELECT pg_temp.fill('f7', 2) AS f7a, pg_temp.fill('f8', 2) AS f7b \gset
SELECT pg_temp.take('f7', 2), pg_temp.take('f8', 2);
SELECT item, success, msg_offset, lease_released, error, queue_name
  FROM queen.ack('g', ARRAY[:f7b,:f7a,:f7b]::bigint[], ARRAY['m2','m2','m1'], ARRAY[NULL,NULL,NULL]::bigint[],
                 ARRAY[NULL,NULL,NULL]::uuid[], ARRAY['completed','completed','completed'], ARRAY[NULL,NULL,NULL])
 ORDER BY item;
SELECT p.name, c.committed, c.lease_id IS NULL AS free FROM queen.log_consumers c
  JOIN queen.log_partitions p ON p.id = c.partition_id WHERE p.name IN ('f7', 'f8') ORDER BY p.name;

SELECT queen.delete_queue('acks');
