-- queen.pop_fused (sql/procedures/56_pop_fused.sql): several queue-wide pops of one group in
-- one call. Cursors go to the requests in claim order (oldest waiting message first), each
-- request within its batch and partitions, each with its own lease; anything queen.pop does
-- cursor by cursor makes every request run queen.pop alone, with the same answers.
SET client_min_messages = warning;
\set VERBOSITY terse

-- six partitions of three messages, pushed a to f: a's messages are the oldest
SELECT count(*) AS pushed FROM (
    SELECT queen.push(ARRAY['fused_q'], ARRAY[p], ARRAY[1], ARRAY[p || i], ARRAY[NULL::uuid], ARRAY[NULL::text],
                      ARRAY['{}'])
      FROM unnest(ARRAY['a', 'b', 'c', 'd', 'e', 'f']) WITH ORDINALITY AS x(p, o), generate_series(1, 3) i
     ORDER BY x.o, i) s;

-- batches 2, 5 and 1 over at most 1, 2 and 1 partitions: a (2 of 3), then b and 2 of c, then d
SELECT request, partition_name, span_start, span_end, lease_id IS NOT NULL AS leased
  FROM queen.pop_fused('fused_q', 'g', ARRAY[2, 5, 1], ARRAY[1, 2, 1], false, true, NULL)
 ORDER BY request, partition_name;
-- one lease per request, on the cursors it was handed
CREATE TEMP VIEW fused_leases AS
SELECT p.name, lc.committed, lc.lease_end, lc.lease_id
  FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id
 WHERE lc.consumer_group = 'g' AND lc.lease_id IS NOT NULL
   AND lc.version = (SELECT max(l2.version) FROM queen.log_consumers l2
                      WHERE l2.partition_id = lc.partition_id AND l2.consumer_group = 'g');
SELECT name, committed, lease_end FROM fused_leases ORDER BY name;
SELECT count(DISTINCT lease_id) AS leases,
       (SELECT lease_id FROM fused_leases WHERE name = 'b') = (SELECT lease_id FROM fused_leases WHERE name = 'c')
           AS b_and_c_share_one
  FROM fused_leases;
DROP VIEW fused_leases;
-- the leased partitions are not handed out again; two requests share e and f by claim order
SELECT request, partition_name, span_start, span_end
  FROM queen.pop_fused('fused_q', 'g', ARRAY[3, 3, 3], ARRAY[1, 1, 1], true, true, NULL)
 ORDER BY request, partition_name;
SELECT count(*) AS nothing_left
  FROM queen.pop_fused('fused_q', 'g', ARRAY[10, 10], ARRAY[10, 10], true, true, NULL);

-- a tombstone past a cursor: each request runs queen.pop alone, which skips the offset
SELECT count(*) AS pushed FROM (
    SELECT queen.push(ARRAY['fused_q'], ARRAY['t'], ARRAY[1], ARRAY['t' || i], ARRAY[NULL::uuid], ARRAY[NULL::text],
                      ARRAY['{}'])
      FROM generate_series(1, 4) i) s;
INSERT INTO queen.message_tombstones (partition_id, msg_offset)
SELECT p.id, 2 FROM queen.log_partitions p WHERE p.name = 't';
SELECT request, partition_name, span_start, span_end, skip_offsets
  FROM queen.pop_fused('fused_q', 'g', ARRAY[2, 2], ARRAY[1, 1], true, true, NULL)
 WHERE partition_id IS NOT NULL
 ORDER BY request;

-- an expired lease taken over: queen.pop's path, its counts row tagged with its request
SELECT count(*) > 0 AS leased FROM queen.pop_fused('fused_q', 'h', ARRAY[10], ARRAY[10], false, true, NULL);
UPDATE queen.log_consumers lc SET lease_expires_at = now() - interval '1 second'
 WHERE lc.consumer_group = 'h' AND lc.lease_id IS NOT NULL;
SELECT request, leases_expired, redelivered
  FROM queen.pop_fused('fused_q', 'h', ARRAY[1, 100], ARRAY[1, 100], false, true, NULL)
 WHERE partition_id IS NULL;

-- a first delivery again after a released lease: the fused path's counts row
SELECT count(*) > 0 AS leased FROM queen.pop_fused('fused_q', 'k', ARRAY[3], ARRAY[1], false, true, NULL);
SELECT queen.release_lease(lc.lease_id, 'k') AS released
  FROM queen.log_consumers lc WHERE lc.consumer_group = 'k' AND lc.lease_id IS NOT NULL;
SELECT request, partition_name, span_end, redelivered
  FROM queen.pop_fused('fused_q', 'k', ARRAY[1, 1], ARRAY[1, 1], false, true, NULL)
 ORDER BY request, partition_id NULLS LAST;

-- bad input changes nothing
SELECT * FROM queen.pop_fused('fused_q', 'g', ARRAY[1, 1], ARRAY[1], true, true, NULL);
SELECT * FROM queen.pop_fused('fused_q', 'g', ARRAY[]::integer[], ARRAY[]::integer[], true, true, NULL);
SELECT * FROM queen.pop_fused('fused_q', 'g', ARRAY[1, 0], ARRAY[1, 1], true, true, NULL);
SELECT count(*) AS unknown_queue FROM queen.pop_fused('no_such_q', 'u', ARRAY[1], ARRAY[1], true, true, NULL);
SELECT count(*) AS unregistered FROM queen.delete_group('u', NULL, true);

-- the tests after this one count every queue's rows
SELECT queen.delete_queue('fused_q') AS deleted;
