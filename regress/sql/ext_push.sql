-- The fused push both ways: the same calls on the stock path (queen.push's PL/pgSQL) and on
-- the C path (queen_ext.push, which queen.push calls when queen_ext 1.3 is installed), each
-- on queues of its own, give the same answers, errors, stored messages (decoded), segment
-- boundaries, dedup rows and cursor readiness. Only the codec of the segments differs.
SET client_min_messages = warning;
SET track_functions = 'all';
\set VERBOSITY terse
-- pg_regress runs psql in its input directory
\i include/differential.sql
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'queen_ext') AS had_extension \gset
DROP EXTENSION IF EXISTS queen_ext;

CREATE TEMP TABLE pushed_raw (path text, step int, item int, status text, partition_id bigint,
                              msg_offset bigint, has_created_at boolean);
-- partitions a push creates are not visible to the statement that called it: names are read
-- afterwards
CREATE TEMP VIEW pushed AS
SELECT r.path, r.step, r.item, r.status, p.name AS part, r.msg_offset, r.has_created_at
  FROM pushed_raw r LEFT JOIN queen.log_partitions p ON p.id = r.partition_id;
CREATE TEMP TABLE refused (path text, step int, sqlstate text, message text);

-- One push of the scenario on the queues of `path` (each queue name prefixed by it); its
-- answer or its error is recorded with the prefix removed.
CREATE FUNCTION pg_temp.step(path text, step int, queues text[], parts text[], counts int[],
                             txids text[], traces uuid[], producers text[], payloads text[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pushed_raw
    SELECT path, step, r.item, r.status, r.partition_id, r.msg_offset, r.created_at IS NOT NULL
      FROM queen.push(ARRAY(SELECT path || '_' || u.q FROM unnest(queues) WITH ORDINALITY AS u(q, o)
                             ORDER BY u.o),
                      parts, counts, txids, traces, producers, payloads) r;
EXCEPTION WHEN OTHERS THEN
    INSERT INTO refused VALUES (path, step, SQLSTATE, replace(SQLERRM, path || '_', ''));
END $$;

CREATE FUNCTION pg_temp.scenario(path text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    -- a group on q1 before any message: its cursors become ready as messages arrive
    PERFORM queen.ensure_queue(path || '_q1');
    PERFORM queen.register_group(path || '_q1', 'g', NULL);
    -- 1: fused keys (one repeated, out of order), ids repeated inside a key and across keys,
    --    trace ids and producers, payloads with escapes and unicode
    PERFORM pg_temp.step(path, 1, ARRAY['q1', 'q1', 'q2', 'q1'], ARRAY['b', 'a', 'a', 'b'],
        ARRAY[2, 3, 2, 2],
        ARRAY['t1', 't2', 't1', 't3', 't3', 't1', 't9', 't2', 't4'],
        ARRAY[NULL, '00000000-0000-0000-0000-000000000001', NULL, NULL, NULL, NULL, NULL, NULL, NULL]::uuid[],
        ARRAY['prod', NULL, '', NULL, NULL, NULL, 'ünï', NULL, NULL]::text[],
        ARRAY['{"a":1}', '"\u0000 and \\"', '[1,2]', 'null', '3', '{"é":"✓"}', 'true', '{}', '"x"']);
    -- 2: the same ids again (duplicates of stored ones) and new ones
    PERFORM pg_temp.step(path, 2, ARRAY['q1', 'q2'], ARRAY['a', 'a'], ARRAY[3, 2],
        ARRAY['t1', 't5', 't5', 't3', 't6'], NULL, NULL, ARRAY['1', '2', '3', '4', '5']);
    -- 3: dedup off (window 0): every item is stored, repeated ids too
    UPDATE queen.queues SET dedup_window_seconds = 0 WHERE name = path || '_q2';
    PERFORM pg_temp.step(path, 3, ARRAY['q2'], ARRAY['a'], ARRAY[3],
        ARRAY['t3', 't7', 't7'], NULL, NULL, ARRAY['6', '7', '8']);
    -- 4: an id whose dedup row left the window is stored again, its row rewritten
    UPDATE queen.log_dedup d SET created_at = d.created_at - interval '3 days'
      FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
     WHERE d.partition_id = p.id AND q.name = path || '_q1' AND p.name = 'a' AND d.transaction_id = 't2';
    PERFORM pg_temp.step(path, 4, ARRAY['q1'], ARRAY['a'], ARRAY[2], ARRAY['t2', 't1'],
        NULL, NULL, ARRAY['"again"', '"dup"']);
    -- 5: back-pressure: maxSize 4 on a queue that holds 5 unconsumed messages
    UPDATE queen.queues SET max_size = 4 WHERE name = path || '_q1';
    PERFORM pg_temp.step(path, 5, ARRAY['q1'], ARRAY['c'], ARRAY[1], ARRAY['t8'], NULL, NULL, ARRAY['1']);
    UPDATE queen.queues SET max_size = 0 WHERE name = path || '_q1';
    -- 6: no items at all; a key with no items beside one with items
    PERFORM pg_temp.step(path, 6, ARRAY[]::text[], ARRAY[]::text[], ARRAY[]::int[],
        ARRAY[]::text[], ARRAY[]::uuid[], ARRAY[]::text[], ARRAY[]::text[]);
    PERFORM pg_temp.step(path, 7, ARRAY['q3', 'q3'], ARRAY['x', 'y'], ARRAY[0, 1], ARRAY['t1'],
        NULL, NULL, ARRAY['1']);
    -- bad input: each refused with the same error, nothing stored
    PERFORM pg_temp.step(path, 20, ARRAY['q4'], ARRAY['a', 'b'], ARRAY[1], ARRAY['t1'], NULL, NULL, ARRAY['1']);
    PERFORM pg_temp.step(path, 21, ARRAY['q4'], ARRAY['a'], ARRAY[NULL]::int[], ARRAY['t1'], NULL, NULL, ARRAY['1']);
    PERFORM pg_temp.step(path, 22, ARRAY['q4', 'q4'], ARRAY['a', 'b'], ARRAY[2, -1], ARRAY['t1'], NULL, NULL, ARRAY['1']);
    PERFORM pg_temp.step(path, 23, ARRAY['q4'], ARRAY['a'], ARRAY[2], ARRAY['t1'], NULL, NULL, ARRAY['1']);
    PERFORM pg_temp.step(path, 24, ARRAY['q4'], ARRAY['a'], ARRAY[1], ARRAY['t1'], NULL, NULL, ARRAY['1', '2']);
    PERFORM pg_temp.step(path, 25, ARRAY['q4'], ARRAY['a'], ARRAY[2], ARRAY['t1', NULL], NULL, NULL, ARRAY['1', '2']);
    PERFORM pg_temp.step(path, 26, ARRAY['q4'], ARRAY['a'], ARRAY[1], ARRAY[repeat('x', 256)], NULL, NULL, ARRAY['1']);
    PERFORM pg_temp.step(path, 27, ARRAY['q4'], ARRAY['a'], ARRAY[1], ARRAY['t1'], NULL, ARRAY[repeat('p', 1025)], ARRAY['1']);
    PERFORM pg_temp.step(path, 28, ARRAY['q4'], ARRAY['a'], ARRAY[1], ARRAY['t1'], NULL, NULL, ARRAY[NULL]::text[]);
    PERFORM pg_temp.step(path, 29, ARRAY['q4'], ARRAY['a'], ARRAY[1], NULL, NULL, NULL, ARRAY['1']);
    PERFORM pg_temp.step(path, 30, ARRAY['q4'], ARRAY[NULL], ARRAY[1], ARRAY['t1'], NULL, NULL, ARRAY['1']);
END $$;

SELECT pg_temp.run_both_paths();

-- the C path ran
SELECT pg_temp.c_path_ran('queen_ext.push(text[],text[],integer[],text[],uuid[],text[],text[])') AS c_push_called;
SELECT count(*) FILTER (WHERE s.codec = 1) > 0 AS ext_has_zstd,
       count(*) FILTER (WHERE s.codec = 1 AND q.name LIKE 'stock%') AS stock_zstd
  FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
  JOIN queen.queues q ON q.id = p.queue_id;

-- the answers, as the C path gave them, and their difference from the stock path's
SELECT step, item, status, part, msg_offset, has_created_at FROM pushed WHERE path = 'ext'
 ORDER BY step, item;
SELECT pg_temp.paths_differ('pushed', 'step, item, status, part, msg_offset, has_created_at') AS answers_differing;

-- the errors
SELECT step, sqlstate, message FROM refused WHERE path = 'ext' ORDER BY step;
SELECT pg_temp.paths_differ('refused', 'step, sqlstate, message') AS errors_differing;

-- what each path stored: messages (decoded), segment boundaries, dedup rows, cursors
CREATE TEMP VIEW stored AS
SELECT split_part(m.queue, '_', 1) AS path, 'message' AS kind,
       concat_ws(' | ', split_part(m.queue, '_', 2), m.partition, m."offset", m.transaction_id,
                 coalesce(m.trace_id::text, '-'), coalesce(m.producer_sub, '-'), m.payload_text, m.created_at = s.created_at) AS row
  FROM queen.messages m
  JOIN queen.log_segments s ON s.partition_id = m.partition_id
   AND m."offset" BETWEEN s.first_offset AND s.last_offset
 WHERE m.queue ~ '^(stock|ext)_'
UNION ALL
SELECT split_part(q.name, '_', 1), 'segment',
       concat_ws(' | ', split_part(q.name, '_', 2), p.name, s.first_offset, s.last_offset)
  FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
  JOIN queen.queues q ON q.id = p.queue_id WHERE q.name ~ '^(stock|ext)_'
UNION ALL
SELECT split_part(q.name, '_', 1), 'dedup',
       concat_ws(' | ', split_part(q.name, '_', 2), p.name, d.transaction_id, d.msg_offset,
                 d.created_at = s.created_at)
  FROM queen.log_dedup d JOIN queen.log_partitions p ON p.id = d.partition_id
  JOIN queen.queues q ON q.id = p.queue_id
  JOIN queen.log_segments s ON s.partition_id = d.partition_id
   AND d.msg_offset BETWEEN s.first_offset AND s.last_offset
 WHERE q.name ~ '^(stock|ext)_'
UNION ALL
SELECT split_part(c.queue, '_', 1), 'cursor',
       concat_ws(' | ', split_part(c.queue, '_', 2), c.partition, c.consumer_group,
                 c.ready_at IS NOT NULL)
  FROM (SELECT DISTINCT ON (lc.partition_id, lc.consumer_group) q.name AS queue,
               p.name AS partition, lc.consumer_group, lc.ready_at
          FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id
          JOIN queen.queues q ON q.id = p.queue_id
         WHERE q.name ~ '^(stock|ext)_'
         ORDER BY lc.partition_id, lc.consumer_group, lc.version DESC) c;

SELECT kind, row FROM stored WHERE path = 'ext' ORDER BY kind, row;
SELECT pg_temp.paths_differ('stored', 'kind, row') AS rows_differing;

-- REPEATABLE READ is refused on both paths
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM queen.push(ARRAY['ext_q1'], ARRAY['a'], ARRAY[1], ARRAY['rr'], NULL, NULL, ARRAY['1']);
ROLLBACK;
DROP EXTENSION queen_ext;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM queen.push(ARRAY['stock_q1'], ARRAY['a'], ARRAY[1], ARRAY['rr'], NULL, NULL, ARRAY['1']);
ROLLBACK;

-- leave the database as it was
SELECT bool_and(queen.delete_queue(name)) AS deleted FROM queen.queues WHERE name ~ '^(stock|ext)_';
SELECT CASE WHEN :'had_extension' THEN 'CREATE EXTENSION queen_ext' END AS restore \gset
\if :{?restore}
:restore;
\endif
