-- The pop claim both ways. First pop_fused.sql again with queen_ext installed: every queue-wide
-- pop takes the C path (queen_ext.pop_fused) and must give what the stock path gives in
-- pop_fused.out, case for case. Then one history popped on each path, each on a queue of its
-- own: the same answers (spans, segments, leases, counts rows, errors), the same cursors and
-- the same dead letters.
SET client_min_messages = warning;
SET track_functions = 'all';
\set VERBOSITY terse
-- pg_regress runs psql in its input directory
\i include/differential.sql
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'queen_ext') AS had_extension \gset
CREATE EXTENSION IF NOT EXISTS queen_ext;
\i sql/pop_fused.sql
DROP EXTENSION queen_ext;

CREATE TEMP TABLE popped (path text, step int, request int, partition_name text, leased boolean,
                          span_start bigint, span_end bigint, seg_first bigint, segments bigint,
                          skip_offsets bigint[], leases_expired int, redelivered bigint,
                          lease_dead_letters int, expired_dead_letters bigint);
CREATE TEMP TABLE refused (path text, step int, sqlstate text, message text);
CREATE TEMP TABLE cursors (path text, step int, partition_name text, consumer_group text, committed bigint,
                           lease_start bigint, lease_end bigint, leased boolean, lease_live boolean, delivered_to bigint,
                           attempts int, attempts_offset bigint, retry_at_set boolean, lease_counted boolean);

-- The group's cursors (newest versions) after a step.
CREATE FUNCTION pg_temp.snapshot(path text, step int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO cursors
    SELECT path, step, p.name, lc.consumer_group, lc.committed, lc.lease_start, lc.lease_end, lc.lease_id IS NOT NULL,
           lc.lease_expires_at > now(), lc.delivered_to, lc.attempts, lc.attempts_offset,
           lc.retry_at IS NOT NULL, lc.lease_counted
      FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE q.name LIKE path || '\_%'
       AND lc.version = (SELECT max(l2.version) FROM queen.log_consumers l2
                          WHERE l2.partition_id = lc.partition_id AND l2.consumer_group = lc.consumer_group)
$$;
-- One fused pop of the path's queue `suffix`; one row per (request, partition, segment).
CREATE FUNCTION pg_temp.pop(path text, step int, suffix text, grp text, batches int[], parts int[],
                            auto_ack boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO popped
    SELECT path, step, f.request, f.partition_name, f.lease_id IS NOT NULL, f.span_start, f.span_end,
           min(f.seg_first), count(f.seg_body), f.skip_offsets, f.leases_expired, f.redelivered,
           f.lease_dead_letters, f.expired_dead_letters
      FROM queen.pop_fused(path || '_' || suffix, grp, batches, parts, auto_ack, true, NULL) f
     GROUP BY f.request, f.partition_name, f.lease_id IS NOT NULL, f.span_start, f.span_end, f.skip_offsets,
              f.leases_expired, f.redelivered, f.lease_dead_letters, f.expired_dead_letters;
    PERFORM pg_temp.snapshot(path, step);
EXCEPTION WHEN OTHERS THEN
    INSERT INTO refused VALUES (path, step, SQLSTATE, replace(SQLERRM, path || '_', ''));
END $$;
-- n pushes of one message each to a partition (one segment each), or one push of n.
CREATE FUNCTION pg_temp.push(q text, part text, n int, one_segment boolean DEFAULT false)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF one_segment THEN
        PERFORM queen.push(ARRAY[q], ARRAY[part], ARRAY[n],
                           ARRAY(SELECT part || '-' || i || '-' || clock_timestamp() FROM generate_series(1, n) i),
                           array_fill(NULL::uuid, ARRAY[n]), array_fill(NULL::text, ARRAY[n]),
                           array_fill('{"k":1}'::text, ARRAY[n]));
    ELSE
        FOR i IN 1 .. n LOOP
            PERFORM queen.push(ARRAY[q], ARRAY[part], ARRAY[1], ARRAY[part || '-' || i || '-' || clock_timestamp()],
                               ARRAY[NULL::uuid], ARRAY[NULL::text], ARRAY['{"k":1}']);
        END LOOP;
    END IF;
END $$;

CREATE FUNCTION pg_temp.scenario(path text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    q text := path || '_pq';
    d text := path || '_dq';
    r text := path || '_rq';
    x text := path || '_xq';
    k text := path || '_kq';
    v_query uuid;
    v_pid bigint;
    v_cycle jsonb;
BEGIN
    PERFORM queen.configure(q, NULL, NULL, '{"leaseTime": 300, "retryLimit": 3}');
    -- a: 6 one-message segments; b: one segment of 5; c: 3 + one of 4; d, e: 2 each
    PERFORM pg_temp.push(q, 'a', 6);
    PERFORM pg_temp.push(q, 'b', 5, true);
    PERFORM pg_temp.push(q, 'c', 3);
    PERFORM pg_temp.push(q, 'c', 4, true);
    PERFORM pg_temp.push(q, 'd', 2);
    PERFORM pg_temp.push(q, 'e', 2);
    -- 1: three requests: batch 4 over 1 partition (half of a), 7 over 2, 2 over 3
    PERFORM pg_temp.pop(path, 1, 'pq', 'g', ARRAY[4, 7, 2], ARRAY[1, 2, 3], false);
    -- 2: auto_ack, everything left, within one segment's span (b's 5 in one segment)
    PERFORM pg_temp.pop(path, 2, 'pq', 'h', ARRAY[3, 100], ARRAY[1, 10], true);
    -- 3: a released lease is a first delivery again (the counts row)
    PERFORM queen.release_lease(lc.lease_id, 'g')
       FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id
      WHERE p.name = 'a' AND lc.consumer_group = 'g' AND lc.lease_id IS NOT NULL
        AND p.queue_id = (SELECT id FROM queen.queues WHERE name = q);
    PERFORM pg_temp.pop(path, 3, 'pq', 'g', ARRAY[2, 2], ARRAY[1, 1], false);
    -- 4: retention removed the oldest segments of a partition past a group's cursor
    PERFORM pg_temp.push(q, 'f', 5);
    DELETE FROM queen.log_segments s USING queen.log_partitions p
     WHERE s.partition_id = p.id AND p.name = 'f' AND s.last_offset <= 2
       AND p.queue_id = (SELECT id FROM queen.queues WHERE name = q);
    PERFORM pg_temp.pop(path, 4, 'pq', 'k', ARRAY[100], ARRAY[100], false);
    -- 5: a request cut on a count that retention made stale: another claim round (stepwise)
    PERFORM pg_temp.push(r, 'x', 5);
    DELETE FROM queen.log_segments s USING queen.log_partitions p
     WHERE s.partition_id = p.id AND p.name = 'x' AND s.last_offset <= 2
       AND p.queue_id = (SELECT id FROM queen.queues WHERE name = r);
    PERFORM pg_temp.pop(path, 5, 'rq', 'm', ARRAY[4], ARRAY[3], false);
    -- 6: tombstones past claimed cursors (stepwise)
    PERFORM pg_temp.push(q, 'g', 4);
    INSERT INTO queen.message_tombstones (partition_id, msg_offset)
    SELECT p.id, t.o FROM queen.log_partitions p, (VALUES ('g', 2), ('a', 5)) t(part, o)
     WHERE p.name = t.part AND p.queue_id = (SELECT id FROM queen.queues WHERE name = q);
    PERFORM pg_temp.pop(path, 6, 'pq', 'n', ARRAY[3, 3], ARRAY[1, 1], false);
    -- 7: an expired lease taken over (stepwise: one attempt counted)
    UPDATE queen.log_consumers lc SET lease_expires_at = now() - interval '1 second'
      FROM queen.log_partitions p
     WHERE p.id = lc.partition_id AND lc.consumer_group = 'n' AND lc.lease_id IS NOT NULL
       AND p.queue_id = (SELECT id FROM queen.queues WHERE name = q);
    PERFORM pg_temp.pop(path, 7, 'pq', 'n', ARRAY[2, 50], ARRAY[1, 50], false);
    -- 8: a window buffer holds back partitions pushed within it, then nothing is held back
    PERFORM queen.configure(q, NULL, NULL, '{"windowBuffer": 3600}');
    PERFORM pg_temp.pop(path, 8, 'pq', 'p', ARRAY[100], ARRAY[100], false);
    PERFORM queen.configure(q, NULL, NULL, '{"windowBuffer": 0}');
    PERFORM pg_temp.pop(path, 9, 'pq', 'p', ARRAY[1, 1, 1], ARRAY[1, 1, 1], false);
    -- 10: delayedProcessing (stepwise): nothing is old enough
    PERFORM queen.configure(d, NULL, NULL, '{"delayedProcessing": 3600}');
    PERFORM pg_temp.push(d, 'a', 2);
    PERFORM pg_temp.pop(path, 10, 'dq', 'g', ARRAY[5], ARRAY[1], false);
    -- 11: nothing claimable, an unknown queue
    PERFORM pg_temp.pop(path, 11, 'pq', 'h', ARRAY[5, 5], ARRAY[5, 5], false);
    PERFORM pg_temp.pop(path, 12, 'nq', 'g', ARRAY[5], ARRAY[5], false);
    -- 17-19: retries exhausted by leases that expire unreleased (retryLimit 1): one attempt
    -- counted on the first takeover, a dead letter (lease_expired) on the second
    PERFORM queen.configure(x, NULL, NULL, '{"leaseTime": 300, "retryLimit": 1}');
    PERFORM pg_temp.push(x, 'a', 3);
    PERFORM pg_temp.pop(path, 17, 'xq', 'g', ARRAY[2], ARRAY[1], false);
    FOR i IN 18 .. 19 LOOP
        UPDATE queen.log_consumers lc SET lease_expires_at = now() - interval '1 second'
          FROM queen.log_partitions p
         WHERE p.id = lc.partition_id AND lc.consumer_group = 'g' AND lc.lease_id IS NOT NULL
           AND p.queue_id = (SELECT id FROM queen.queues WHERE name = x);
        PERFORM pg_temp.pop(path, i, 'xq', 'g', ARRAY[2], ARRAY[1], false);
    END LOOP;
    -- 20-23: a kept lease taken over (stepwise). A stream cycle commits a prefix of k's span and
    -- keeps the lease (release_lease false: lease_counted); the lease expires and a pop takes k
    -- over: the tail is redelivered and no attempt is counted, so nothing is dead-lettered
    -- although retryLimit is 0. The lease that pop gave expires unkept: one attempt, past the
    -- limit, its head dead-lettered (lease_expired).
    PERFORM queen.configure(k, NULL, NULL, '{"leaseTime": 300, "retryLimit": 0}');
    PERFORM pg_temp.push(k, 'k', 4);
    PERFORM pg_temp.pop(path, 20, 'kq', 'kg', ARRAY[10], ARRAY[1], false);
    SELECT r.query_id INTO v_query FROM queen.stream_register(path || '.kept', k, NULL, 'h') r;
    SELECT p.id INTO v_pid FROM queen.log_partitions p JOIN queen.queues qu ON qu.id = p.queue_id
     WHERE qu.name = k AND p.name = 'k';
    v_cycle := queen.stream_cycle(v_query, v_pid, 'kg', ARRAY['upsert'], ARRAY['seen'], ARRAY['1'::jsonb],
        '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}',
        'k-1', 1, (SELECT lc.lease_id FROM queen.log_consumers lc WHERE lc.partition_id = v_pid AND lc.consumer_group = 'kg'),
        'completed', NULL, false);
    IF NOT (v_cycle->>'success')::boolean THEN
        INSERT INTO refused VALUES (path, 21, 'cycle', v_cycle->>'error');
    END IF;
    PERFORM pg_temp.snapshot(path, 21);
    FOR i IN 22 .. 23 LOOP
        UPDATE queen.log_consumers lc SET lease_expires_at = now() - interval '1 second'
         WHERE lc.partition_id = v_pid AND lc.consumer_group = 'kg' AND lc.lease_id IS NOT NULL;
        PERFORM pg_temp.pop(path, i, 'kq', 'kg', ARRAY[10], ARRAY[1], false);
    END LOOP;
    DELETE FROM queen.stream_state WHERE query_id = v_query;
    DELETE FROM queen.stream_queries WHERE id = v_query;
    -- 13-16: bad input
    PERFORM pg_temp.pop(path, 13, 'pq', 'g', ARRAY[1, 1], ARRAY[1], false);
    PERFORM pg_temp.pop(path, 14, 'pq', 'g', ARRAY[]::int[], ARRAY[]::int[], false);
    PERFORM pg_temp.pop(path, 15, 'pq', 'g', ARRAY[1, NULL], ARRAY[1, 1], false);
    PERFORM pg_temp.pop(path, 16, 'pq', 'g', ARRAY[1], ARRAY[0], false);
END $$;

SELECT pg_temp.run_both_paths();

-- the C path ran
SELECT pg_temp.c_path_ran('queen_ext.pop_fused(text,text,integer[],integer[],boolean,boolean,timestamptz)') AS c_pop_called;

-- the answers, as the C path gave them, and their difference from the stock path's
SELECT step, request, partition_name, leased, span_start, span_end, seg_first, segments, skip_offsets,
       leases_expired, redelivered, lease_dead_letters, expired_dead_letters
  FROM popped WHERE path = 'ext' ORDER BY step, request, partition_name NULLS LAST;
SELECT pg_temp.paths_differ('popped', 'step, request, partition_name, leased, span_start, span_end, seg_first, segments, skip_offsets, leases_expired, redelivered, lease_dead_letters, expired_dead_letters') AS answers_differing;
SELECT step, sqlstate, message FROM refused WHERE path = 'ext' ORDER BY step;
SELECT pg_temp.paths_differ('refused', 'step, sqlstate, message') AS errors_differing;
-- one lease per request of a call: requests of step 1 hold three distinct leases
SELECT count(DISTINCT lc.lease_id) AS step_1_leases
  FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id
  JOIN queen.queues q ON q.id = p.queue_id
 WHERE q.name = 'ext_pq' AND lc.consumer_group = 'g' AND lc.lease_id IS NOT NULL AND p.name <> 'a';

-- the cursors after every step, and their difference
SELECT count(*) AS cursor_rows, count(DISTINCT step) AS steps FROM cursors WHERE path = 'ext';
-- the kept lease (steps 20-23): counted by the cycle (21), taken over without an attempt (22),
-- then an unkept expiry counts one and dead-letters the head, offset 2 (23)
SELECT step, committed, lease_start, lease_end, leased, lease_counted, attempts, attempts_offset, delivered_to
  FROM cursors WHERE path = 'ext' AND consumer_group = 'kg' AND partition_name = 'k' ORDER BY step;
SELECT pg_temp.paths_differ('cursors', 'step, partition_name, consumer_group, committed, lease_start, lease_end, leased, lease_live, delivered_to, attempts, attempts_offset, retry_at_set, lease_counted') AS cursors_differing;

-- the dead letters (the exhausted retries of steps 17-19 and 23), and their difference
CREATE TEMP VIEW letters AS
SELECT split_part(q.name, '_', 1) AS path, split_part(q.name, '_', 2) AS queue, p.name AS partition_name,
       d.msg_offset, d.consumer_group, d.reason, d.error_message, d.attempts, d.transaction_id IS NOT NULL AS has_txid
  FROM queen.dead_letters d JOIN queen.log_partitions p ON p.id = d.partition_id
  JOIN queen.queues q ON q.id = p.queue_id
 WHERE q.name LIKE 'stock\_%' OR q.name LIKE 'ext\_%';
SELECT queue, partition_name, msg_offset, consumer_group, reason, error_message, attempts, has_txid
  FROM letters WHERE path = 'ext' ORDER BY 1, 2, 3;
SELECT pg_temp.paths_differ('letters', 'queue, partition_name, msg_offset, consumer_group, reason, error_message, attempts, has_txid') AS dead_letters_differing;
DROP VIEW letters;

-- the tests after this one count every queue's rows
SELECT count(*) AS deleted FROM (SELECT queen.delete_queue(n)
  FROM unnest(ARRAY['stock_pq', 'stock_dq', 'stock_rq', 'stock_xq', 'stock_kq', 'ext_pq', 'ext_dq', 'ext_rq', 'ext_xq',
                    'ext_kq']) n) x;
SELECT count(*) AS unregistered FROM queen.delete_group('g', 'stock_nq', true);
SELECT count(*) AS unregistered FROM queen.delete_group('g', 'ext_nq', true);
SELECT CASE WHEN NOT :'had_extension' THEN 'DROP EXTENSION queen_ext' END AS restore \gset
\if :{?restore}
:restore;
\endif
