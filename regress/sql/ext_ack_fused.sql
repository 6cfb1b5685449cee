-- The fused ack both ways: the same calls of queen.ack_fused on the stock path and through
-- queen_ext.ack_fused (with queen_ext.ack_completed for completions), each on a queue of its
-- own with the same history, give the same answers, cursors and dead letters.
SET client_min_messages = warning;
SET track_functions = 'all';
\set VERBOSITY terse
-- pg_regress runs psql in its input directory
\i include/differential.sql
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'queen_ext') AS had_extension \gset
DROP EXTENSION IF EXISTS queen_ext;

CREATE TEMP TABLE acked (path text, step int, item int, success boolean, msg_offset bigint, noop boolean,
                         dlq boolean, lease_released boolean, error text, queue_name text);
CREATE TEMP TABLE refused (path text, step int, sqlstate text, message text);

-- the partition id of a partition of the path's queue
CREATE FUNCTION pg_temp.pid(path text, part text) RETURNS bigint LANGUAGE sql AS $$
    SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
     WHERE q.name = path || '_fq' AND p.name = part
$$;
-- one fused call: acks (request, partition name, transaction id, offset, status); the lease
-- ids are the live ones when `live_lease`, else NULL
CREATE FUNCTION pg_temp.fused(path text, step int, requests int[], parts text[], txids text[],
                              offsets bigint[], statuses text[], live_lease boolean DEFAULT false)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO acked
    SELECT path, step, a.item, a.success, a.msg_offset, a.noop, a.dlq, a.lease_released, a.error,
           replace(a.queue_name, path || '_', '')
      FROM queen.ack_fused('g', requests,
               ARRAY(SELECT pg_temp.pid(path, u.p) FROM unnest(parts) WITH ORDINALITY u(p, o) ORDER BY u.o),
               txids, offsets,
               ARRAY(SELECT CASE WHEN live_lease THEN (SELECT lc.lease_id FROM queen.log_consumers lc
                                                       WHERE lc.partition_id = pg_temp.pid(path, u.p)
                                                         AND lc.consumer_group = 'g'
                                                       ORDER BY lc.version DESC LIMIT 1) END
                       FROM unnest(parts) WITH ORDINALITY u(p, o) ORDER BY u.o),
               statuses, array_fill(NULL::text, ARRAY[cardinality(statuses)])) a;
EXCEPTION WHEN OTHERS THEN
    INSERT INTO refused VALUES (path, step, SQLSTATE, replace(SQLERRM, path || '_', ''));
END $$;

CREATE FUNCTION pg_temp.scenario(path text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    q text := path || '_fq';
BEGIN
    PERFORM queen.configure(q, NULL, NULL, '{"retryDelay": 0, "retryLimit": 1, "leaseTime": 300}');
    PERFORM queen.push(ARRAY[q, q, q, q], ARRAY['a', 'b', 'c', 'd'], ARRAY[4, 4, 4, 4],
        ARRAY['a1','a2','a3','a4','b1','b2','b3','b4','c1','c2','c3','c4','d1','d2','d3','d4'],
        array_fill(NULL::uuid, ARRAY[16]), array_fill(NULL::text, ARRAY[16]), array_fill('1'::text, ARRAY[16]));
    PERFORM queen.pop(q, p, 'g', 3, 1, false, true, NULL) FROM unnest(ARRAY['a', 'b', 'c', 'd']) p;
    -- 1: two requests on distinct partitions by transaction id; a third naming a partition of
    --    the first (left out); completions only
    PERFORM pg_temp.fused(path, 1, ARRAY[1, 1, 2, 3], ARRAY['a', 'a', 'b', 'a'],
        ARRAY['a1', 'a2', 'b3', 'a3'], ARRAY[NULL, NULL, NULL, NULL]::bigint[],
        ARRAY['completed', 'completed', 'completed', 'completed']);
    -- 2: by offset with the live lease, a duplicate, a noop, an unknown id
    PERFORM pg_temp.fused(path, 2, ARRAY[1, 1, 2, 2], ARRAY['a', 'a', 'c', 'c'],
        ARRAY['a3', 'a3', 'c1', 'zz'], ARRAY[3, 3, NULL, NULL]::bigint[],
        ARRAY['completed', 'completed', 'completed', 'completed'], true);
    -- 3: a retry and a dead letter (the walk), beside completions of another request
    PERFORM pg_temp.fused(path, 3, ARRAY[1, 2, 3], ARRAY['c', 'd', 'b'],
        ARRAY['c2', 'd1', 'b1'], ARRAY[NULL, NULL, NULL]::bigint[], ARRAY['retry', 'dlq', 'completed']);
    -- 4: a partition the group has no cursor on, and an empty call
    PERFORM pg_temp.fused(path, 4, ARRAY[1], ARRAY['nope'], ARRAY['x'], ARRAY[NULL]::bigint[], ARRAY['completed']);
    PERFORM pg_temp.fused(path, 5, ARRAY[]::int[], ARRAY[]::text[], ARRAY[]::text[], ARRAY[]::bigint[], ARRAY[]::text[]);
    -- 6: arrays of different lengths
    PERFORM pg_temp.fused(path, 6, ARRAY[1, 2], ARRAY['a'], ARRAY['a4'], ARRAY[NULL]::bigint[], ARRAY['completed']);
END $$;

SELECT pg_temp.run_both_paths();

-- the C paths ran
SELECT pg_temp.c_path_ran('queen_ext.ack_fused(text,integer[],bigint[],text[],bigint[],uuid[],text[],text[])') AS c_fused_called;

-- the answers, as the C path gave them, and their difference from the stock path's
SELECT step, item, success, msg_offset, noop, dlq, lease_released, error, queue_name
  FROM acked WHERE path = 'ext' ORDER BY step, item;
SELECT pg_temp.paths_differ('acked', 'step, item, success, msg_offset, noop, dlq, lease_released, error, queue_name') AS answers_differing;
SELECT step, sqlstate, message FROM refused WHERE path = 'ext' ORDER BY step;
SELECT pg_temp.paths_differ('refused', 'step, sqlstate, message') AS errors_differing;

-- the cursors (newest versions) and the dead letters
CREATE TEMP VIEW state AS
SELECT split_part(q.name, '_', 1) AS path,
       concat_ws(' | ', 'cursor', p.name, c.committed, c.lease_id IS NULL, coalesce(c.lease_end::text, '-'),
                 c.attempts, c.attempts_offset, c.lease_counted, c.retry_at IS NULL) AS row
  FROM (SELECT DISTINCT ON (lc.partition_id) lc.* FROM queen.log_consumers lc
         WHERE lc.consumer_group = 'g' ORDER BY lc.partition_id, lc.version DESC) c
  JOIN queen.log_partitions p ON p.id = c.partition_id JOIN queen.queues q ON q.id = p.queue_id
 WHERE q.name ~ '^(stock|ext)_fq$'
UNION ALL
SELECT split_part(q.name, '_', 1),
       concat_ws(' | ', 'dead letter', p.name, d.msg_offset, d.transaction_id, d.reason, d.attempts)
  FROM queen.dead_letters d JOIN queen.log_partitions p ON p.id = d.partition_id
  JOIN queen.queues q ON q.id = d.queue_id WHERE q.name ~ '^(stock|ext)_fq$';
SELECT row FROM state WHERE path = 'ext' ORDER BY row;
SELECT pg_temp.paths_differ('state', 'row') AS rows_differing;

-- leave the database as it was
SELECT bool_and(queen.delete_queue(name)) AS deleted FROM queen.queues WHERE name ~ '^(stock|ext)_fq$';
SELECT CASE WHEN NOT :'had_extension' THEN 'DROP EXTENSION queen_ext' END AS restore \gset
\if :{?restore}
:restore;
\endif
