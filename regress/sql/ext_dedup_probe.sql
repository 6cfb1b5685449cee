-- queen_ext.dedup_probe (ext/dedup_probe.c): batched B-tree probes of queen.log_dedup.
-- Rows are inserted directly, in partitions no other suite uses (negative ids), and
-- removed at the end.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET client_min_messages = warning;
\set VERBOSITY terse
\set SHOW_CONTEXT never
SELECT NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'queen_ext') AS ext_was_absent \gset
CREATE EXTENSION IF NOT EXISTS queen_ext;

-- SQLSTATE and message of a statement, or 'ok'.
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$f$;

INSERT INTO queen.log_dedup (partition_id, transaction_id, msg_offset, created_at) VALUES
  (-101, 'a', 0, '2024-01-01 00:00:00+00'),
  (-101, 'b', 1, '2024-01-01 00:00:01+00'),
  (-101, 'Tx-Case', 2, '2024-01-01 00:00:02+00'),
  (-101, 'ü-tx', 3, '2024-01-01 00:00:03.000001+00'),
  (-101, repeat('z', 255), 4, '2024-01-01 00:00:04+00'),
  (-102, 'a', 70, '2023-06-01 12:00:00+00'),
  (-102, 'c', 71, '2023-06-01 12:00:01+00');

-- 1. Found, missing, NULL and repeated ids; one row per matching position (1-based).
SELECT * FROM queen_ext.dedup_probe(-101, ARRAY['a', 'missing', NULL, 'b', 'a', 'ü-tx', repeat('z', 255)]);
-- Another partition's rows are not matched; ids differ only in case are different ids.
SELECT * FROM queen_ext.dedup_probe(-102, ARRAY['a', 'b', 'c']);
SELECT * FROM queen_ext.dedup_probe(-101, ARRAY['tx-case', 'TX-CASE', 'Tx-Case', 'Tx-Case ', 'A']);
-- No rows: unknown partition, empty array, only NULLs, and (STRICT) NULL arguments.
SELECT count(*) FROM queen_ext.dedup_probe(-103, ARRAY['a', 'b']);
SELECT count(*) FROM queen_ext.dedup_probe(-101, ARRAY[]::text[]);
SELECT count(*) FROM queen_ext.dedup_probe(-101, ARRAY[NULL, NULL]::text[]);
SELECT count(*) FROM queen_ext.dedup_probe(NULL::bigint, ARRAY['a']);
SELECT count(*) FROM queen_ext.dedup_probe(-101, NULL);
-- The array's bounds do not matter: idx is the 1-based position.
SELECT * FROM queen_ext.dedup_probe(-101, '[0:2]={x,b,a}'::text[]);

-- 2. A batch of 2,000 ids, every other one stored: the probes equal the SQL join.
INSERT INTO queen.log_dedup (partition_id, transaction_id, msg_offset, created_at)
  SELECT -104, 'tx-' || i, 1000 + i, timestamptz '2024-05-01 00:00:00+00' + i * interval '1 second'
    FROM generate_series(1, 2000, 2) i;
CREATE TEMP TABLE batch AS SELECT array_agg('tx-' || i ORDER BY i) AS txids FROM generate_series(1, 2000) i;
SELECT count(*) AS found, min(p.idx), max(p.idx), sum(p.msg_offset) AS offsets
  FROM batch b, queen_ext.dedup_probe(-104, b.txids) p;
SELECT count(*) AS differences
  FROM ((SELECT p.* FROM batch b, queen_ext.dedup_probe(-104, b.txids) p
         EXCEPT
         SELECT u.i::int, d.msg_offset, d.created_at
           FROM batch b, unnest(b.txids) WITH ORDINALITY u(txid, i)
           JOIN queen.log_dedup d ON d.partition_id = -104 AND d.transaction_id = u.txid)
        UNION ALL
        (SELECT u.i::int, d.msg_offset, d.created_at
           FROM batch b, unnest(b.txids) WITH ORDINALITY u(txid, i)
           JOIN queen.log_dedup d ON d.partition_id = -104 AND d.transaction_id = u.txid
         EXCEPT
         SELECT p.* FROM batch b, queen_ext.dedup_probe(-104, b.txids) p)) x;

-- 3. The statement's snapshot: rows this transaction wrote or deleted count as such.
BEGIN;
INSERT INTO queen.log_dedup VALUES (-101, 'new', 9, '2024-02-02 00:00:00+00');
DELETE FROM queen.log_dedup WHERE partition_id = -101 AND transaction_id = 'b';
UPDATE queen.log_dedup SET msg_offset = 10 WHERE partition_id = -101 AND transaction_id = 'a';
SELECT * FROM queen_ext.dedup_probe(-101, ARRAY['a', 'b', 'new']);
ROLLBACK;
SELECT * FROM queen_ext.dedup_probe(-101, ARRAY['a', 'b', 'new']);

-- 4. Errors: a two-dimensional array (22023); no queen.log_dedup (42P01, the broker schema
-- is not installed); no B-tree on (partition_id, transaction_id) (42704); columns of other
-- types (42809); no SELECT privilege (42501).
SELECT * FROM queen_ext.dedup_probe(-101, ARRAY[['a'], ['b']]);
\echo :LAST_ERROR_SQLSTATE
BEGIN;
ALTER TABLE queen.log_dedup RENAME TO log_dedup_moved;
SELECT * FROM queen_ext.dedup_probe(-101, ARRAY['a']);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
ALTER TABLE queen.log_dedup DROP CONSTRAINT log_dedup_pkey;
SELECT * FROM queen_ext.dedup_probe(-101, ARRAY['a']);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
ALTER TABLE queen.log_dedup ALTER COLUMN msg_offset TYPE integer;
SELECT * FROM queen_ext.dedup_probe(-101, ARRAY['a']);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- Any valid B-tree on exactly those columns will do, not only the primary key.
BEGIN;
ALTER TABLE queen.log_dedup DROP CONSTRAINT log_dedup_pkey;
CREATE INDEX log_dedup_other ON queen.log_dedup (partition_id, transaction_id DESC);
SELECT * FROM queen_ext.dedup_probe(-101, ARRAY['b', 'a']);
ROLLBACK;
-- An index with other columns or a different collation is not used.
BEGIN;
ALTER TABLE queen.log_dedup DROP CONSTRAINT log_dedup_pkey;
CREATE INDEX log_dedup_three ON queen.log_dedup (partition_id, transaction_id, msg_offset);
CREATE INDEX log_dedup_swapped ON queen.log_dedup (transaction_id, partition_id);
CREATE INDEX log_dedup_posix ON queen.log_dedup (partition_id, transaction_id COLLATE "POSIX");
SELECT pg_temp.err($$SELECT * FROM queen_ext.dedup_probe(-101, ARRAY['a'])$$);
ROLLBACK;
CREATE ROLE regress_queen_ext_reader;
SET ROLE regress_queen_ext_reader;
SELECT * FROM queen_ext.dedup_probe(-101, ARRAY['a']);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT USAGE ON SCHEMA queen TO regress_queen_ext_reader;
SET ROLE regress_queen_ext_reader;
SELECT * FROM queen_ext.dedup_probe(-101, ARRAY['a']);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT SELECT ON queen.log_dedup TO regress_queen_ext_reader;
SET ROLE regress_queen_ext_reader;
SELECT * FROM queen_ext.dedup_probe(-101, ARRAY['a']);
RESET ROLE;
REVOKE ALL ON queen.log_dedup FROM regress_queen_ext_reader;
REVOKE ALL ON SCHEMA queen FROM regress_queen_ext_reader;
DROP ROLE regress_queen_ext_reader;

-- 5. Declaration: STABLE (reads the table with the statement's snapshot), STRICT, PARALLEL SAFE.
SELECT p.oid::regprocedure AS function, pg_get_function_result(p.oid) AS result,
       p.provolatile AS volatile, p.proisstrict AS strict, p.proparallel AS parallel
  FROM pg_proc p WHERE p.oid = 'queen_ext.dedup_probe(bigint, text[])'::regprocedure;

-- 6. (1.2) Many partitions in one call: partition_ids[i] pairs with txids[i].
SELECT * FROM queen_ext.dedup_probe(ARRAY[-101, -102, -102, -101, NULL, -103, -101]::bigint[],
                                    ARRAY['a', 'a', 'b', 'b', 'a', 'a', NULL]);
SELECT count(*) FROM queen_ext.dedup_probe(ARRAY[]::bigint[], ARRAY[]::text[]);
SELECT count(*) FROM queen_ext.dedup_probe(NULL::bigint[], ARRAY['a']);
SELECT pg_temp.err($$SELECT * FROM queen_ext.dedup_probe(ARRAY[-101, -102]::bigint[], ARRAY['a'])$$);
SELECT pg_temp.err($$SELECT * FROM queen_ext.dedup_probe(ARRAY[[-101]]::bigint[], ARRAY['a'])$$);
-- the same answers as the codec layer's SQL join, pair by pair
SELECT count(*) AS differing FROM (
    (SELECT * FROM queen_ext.dedup_probe(ARRAY[-101, -102, -102, -101, -101]::bigint[],
                                          ARRAY['a', 'a', 'c', 'Tx-Case', 'zz'])
     EXCEPT
     SELECT u.i::integer, d.msg_offset, d.created_at
       FROM unnest(ARRAY[-101, -102, -102, -101, -101]::bigint[], ARRAY['a', 'a', 'c', 'Tx-Case', 'zz'])
            WITH ORDINALITY AS u(pid, txid, i)
       JOIN queen.log_dedup d ON d.partition_id = u.pid AND d.transaction_id = u.txid)) x;
SELECT p.oid::regprocedure AS function, p.provolatile AS volatile, p.proisstrict AS strict, p.proparallel AS parallel
  FROM pg_proc p WHERE p.oid = 'queen_ext.dedup_probe(bigint[], text[])'::regprocedure;

DELETE FROM queen.log_dedup WHERE partition_id BETWEEN -104 AND -101;
-- Leave the database as this suite found it (later suites expect their codec path).
\if :ext_was_absent
DROP EXTENSION queen_ext;
\endif
