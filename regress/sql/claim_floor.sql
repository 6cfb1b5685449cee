-- Claim floors (sql/procedures/53_claim_floor.sql): a lower bound per (queue, group) on every
-- cursor's ready_at, raised by queen.raise_claim_floors, reset by whatever can make a cursor's
-- messages older, and always at or below every ready_at; pops still claim oldest first.
SET client_min_messages = warning;
\set VERBOSITY terse

CREATE FUNCTION pg_temp.push(part text, txid text) RETURNS bigint LANGUAGE sql AS $$
    SELECT msg_offset FROM queen.push(ARRAY['floor_q'], ARRAY[part], ARRAY[1], ARRAY[txid],
                                      ARRAY[NULL::uuid], ARRAY[NULL::text], ARRAY['{}'])
$$;
CREATE FUNCTION pg_temp.qid() RETURNS bigint LANGUAGE sql AS $$
    SELECT id FROM queen.queues WHERE name = 'floor_q'
$$;
-- Cursors below their group's floor: must always be 0.
CREATE FUNCTION pg_temp.below_floor() RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM queen.log_consumers lc
     WHERE lc.ready_at < queen.claim_floor(lc.queue_id, lc.consumer_group)
$$;
-- The raise of this queue only (other tests' queues are not this file's business).
CREATE FUNCTION pg_temp.raise() RETURNS integer LANGUAGE sql AS $$
    SELECT queen.raise_claim_floor(pg_temp.qid(), 'floor_q', 1000)
$$;
CREATE FUNCTION pg_temp.floors() RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM queen.claim_floors WHERE queue_id = pg_temp.qid()
$$;
CREATE FUNCTION pg_temp.ack(part text, txid text) RETURNS boolean LANGUAGE sql AS $$
    SELECT success FROM queen.ack('g', ARRAY[(SELECT id FROM queen.log_partitions WHERE name = part)],
        ARRAY[txid], ARRAY[NULL]::bigint[], ARRAY[NULL]::uuid[], ARRAY['completed'], ARRAY[NULL]::text[])
$$;

-- no floor yet: -infinity, and a group that does not exist has none either
SELECT pg_temp.push('a', 'a1') AS a1;
SELECT count(*) AS segments FROM queen.pop('floor_q', NULL, 'g', 1, 1, false, true, NULL);
SELECT queen.claim_floor(pg_temp.qid(), 'g') AS floor_before, queen.claim_floor(pg_temp.qid(), 'nobody') AS no_group;

-- a raise with a waiting message (a1, leased) puts the floor at its createdAt (the procedure
-- the housekeeping leader calls, one transaction per queue)
DO $$ DECLARE raised integer; skipped integer; BEGIN CALL queen.raise_claim_floors(raised, skipped); END $$;
SELECT queen.claim_floor(pg_temp.qid(), 'g') = (SELECT min(ready_at) FROM queen.log_consumers WHERE consumer_group = 'g')
       AS floor_is_oldest_ready, pg_temp.below_floor() AS below;
-- nothing moved: a second raise writes nothing
SELECT pg_temp.raise() AS raised;

-- pushes after the raise are above it, and pops still take the oldest first
SELECT pg_temp.push('b', 'b1') AS b1, pg_temp.push('c', 'c1') AS c1, pg_temp.push('b', 'b2') AS b2;
SELECT pg_temp.ack('a', 'a1') AS acked;
SELECT pg_temp.raise() AS raised;
SELECT pg_temp.below_floor() AS below,
       queen.claim_floor(pg_temp.qid(), 'g') = (SELECT min(ready_at) FROM queen.log_consumers WHERE consumer_group = 'g')
       AS floor_is_oldest_ready;
SELECT partition_name, span_start, span_end FROM queen.pop('floor_q', NULL, 'g', 10, 1, false, true, NULL);
SELECT partition_name, span_start, span_end FROM queen.pop('floor_q', NULL, 'g', 10, 1, false, true, NULL);
SELECT pg_temp.ack('b', 'b2') AS acked_b, pg_temp.ack('c', 'c1') AS acked_c;

-- nothing waits: the raise puts the floor at the clock, and the next push is still claimed
SELECT pg_temp.raise() AS raised;
SELECT count(*) FILTER (WHERE ready_at IS NOT NULL) AS ready, pg_temp.below_floor() AS below,
       queen.claim_floor(pg_temp.qid(), 'g') > '-infinity' AS floor_set
  FROM queen.log_consumers WHERE consumer_group = 'g';
SELECT pg_temp.push('a', 'a2') AS a2;
SELECT pg_temp.below_floor() AS below;
SELECT partition_name, span_start, span_end FROM queen.pop('floor_q', NULL, 'g', 10, 1, true, true, NULL);

-- a seek back to the beginning resets the floor; every message is claimable again
SELECT status FROM queen.seek_group('floor_q', 'g', NULL, false, '-infinity');
SELECT queen.claim_floor(pg_temp.qid(), 'g') AS floor_after_seek, pg_temp.below_floor() AS below;
SELECT partition_name, span_start, span_end FROM queen.pop('floor_q', NULL, 'g', 10, 3, true, true, NULL)
 ORDER BY partition_name;

-- a restart from the start resets it too
SELECT pg_temp.raise() AS raised;
SELECT queen.claim_floor(pg_temp.qid(), 'g') > '-infinity' AS raised_again;
SELECT count(*) AS restarted FROM queen.delete_group('g', 'floor_q', false);
SELECT queen.claim_floor(pg_temp.qid(), 'g') AS floor_after_restart, pg_temp.below_floor() AS below;

-- housekeeping lowers a floor that a cursor is below (written by anything else), then keeps
-- only the newest floor of each group
SELECT pg_temp.raise() AS raised;
SELECT pg_temp.floors() AS floors_kept;
UPDATE queen.log_consumers SET ready_at = '2000-01-01' WHERE consumer_group = 'g'
   AND partition_id = (SELECT id FROM queen.log_partitions WHERE name = 'a');
SELECT pg_temp.below_floor() AS below_before_housekeeping;
SELECT queen.run_housekeeping(0, 999999999) ->> 'resetClaimFloors' AS reset;
SELECT pg_temp.below_floor() AS below, queen.claim_floor(pg_temp.qid(), 'g') AS floor;
SELECT pg_temp.floors() AS floors_after_compaction;

-- a dropped queue takes its floors with it
SELECT pg_temp.raise() AS raised;
SELECT pg_temp.qid() AS old_id \gset
SELECT queen.delete_queue('floor_q') AS deleted;
SELECT count(*) AS floors_left FROM queen.claim_floors WHERE queue_id = :old_id;
SELECT count(*) FROM queen.delete_group('g', NULL, true);
