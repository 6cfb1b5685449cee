-- Claim floors: per (queue, group), a lower bound on the ready_at of every cursor, so that a
-- pop's claim walks log_consumers_ready from that bound instead of from the start. A cursor
-- that moves on leaves its old index entry behind with an older ready_at than any live one;
-- while a snapshot is held (a pg_dump, an idle REPEATABLE READ session, a standby with
-- hot_standby_feedback) those entries cannot be removed, and a claim walking from the start
-- visits every one of them (docs/architecture.md, "Held snapshots").
--
-- Invariant: every non-NULL ready_at of a (queue, group) is >= queen.claim_floor of it.
-- Who keeps it:
--   * queen.raise_claim_floors (the housekeeping leader, every QUEEN_CLAIM_FLOOR_INTERVAL_MS)
--     takes a queue's floor lock exclusively, which waits out every push and reset in flight
--     on that queue, and raises each group's floor to least(its oldest ready_at, the clock);
--   * pushes (queen.push, the DLQ requeue) hold the floor locks of their queues shared and
--     stamp createdAt no earlier than the clock after taking them, so what they commit is newer
--     than any floor raised before; acknowledgements, pops, dead-lettering and retention only
--     move a cursor forward, onto messages no older than its ready_at;
--   * whatever can give a cursor older messages than it had (registration, seeks, a group
--     restarted from its start, housekeeping's repairs) calls queen.reset_claim_floor, which
--     takes the lock shared and writes the floor -infinity.
-- Lock order: the floor locks come before partition and cursor rows. The raise holds only
-- its one lock, with a short lock_timeout, so pushes never queue long behind it.

-- queen.claim_floor_key(queue name): the transaction advisory lock key of a queue's floors.
CREATE OR REPLACE FUNCTION queen.claim_floor_key(p_queue text)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT (x'5146' :: bit(16) :: bigint << 48) | (hashtext(p_queue)::bigint & x'ffffffff'::bigint) $$;
COMMENT ON FUNCTION queen.claim_floor_key(text) IS
  'Advisory lock key ordering the raise of a queue''s claim floors with its pushes and resets.';

-- queen.claim_floor(queue id, group): the newest floor, -infinity when there is none.
CREATE OR REPLACE FUNCTION queen.claim_floor(p_queue_id bigint, p_group text)
RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    SELECT coalesce((SELECT f.floor FROM queen.claim_floors f
                      WHERE f.queue_id = p_queue_id AND f.consumer_group = p_group
                      ORDER BY f.seq DESC LIMIT 1), '-infinity')
$$;
COMMENT ON FUNCTION queen.claim_floor(bigint, text) IS
  'Lower bound of every ready_at of a group''s cursors on a queue (-infinity when unknown).';

-- queen.lock_claim_floors_shared(queue names): the floor locks of these queues, shared, for
-- the rest of the transaction. Shared locks never wait for each other, so order is free.
CREATE OR REPLACE FUNCTION queen.lock_claim_floors_shared(p_queues text[])
RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(k.key)
       FROM (SELECT DISTINCT queen.claim_floor_key(q) AS key FROM unnest(p_queues) AS q) k;
END;
$$;
COMMENT ON FUNCTION queen.lock_claim_floors_shared(text[]) IS
  'Holds the claim-floor locks of queues shared until commit (pushes and resets).';

-- queen.reset_claim_floor(queue name, group): the group's floor becomes -infinity, before
-- or after its cursors are given older messages in the same transaction.
CREATE OR REPLACE FUNCTION queen.reset_claim_floor(p_queue text, p_group text)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_queue_id bigint;
BEGIN
    PERFORM pg_advisory_xact_lock_shared(queen.claim_floor_key(p_queue));
    SELECT q.id INTO v_queue_id FROM queen.queues q WHERE q.name = p_queue;
    -- Read after the lock: no raise can commit until this transaction does.
    IF v_queue_id IS NOT NULL AND queen.claim_floor(v_queue_id, p_group) > '-infinity' THEN
        INSERT INTO queen.claim_floors (queue_id, consumer_group, floor) VALUES (v_queue_id, p_group, '-infinity');
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.reset_claim_floor(text, text) IS
  'Lowers a group''s claim floor to -infinity (for changes that can make ready_at older).';

-- queen.raise_claim_floor(queue id, queue name, lock wait): raises the floor of every group of
-- the queue to least(its oldest ready_at, the clock); the number of floors raised. Raises
-- lock_not_available when pushes or resets hold the queue's floor lock longer than the wait
-- (milliseconds): pushes arriving meanwhile queue behind the raise, so it must be short.
CREATE OR REPLACE FUNCTION queen.raise_claim_floor(p_queue_id bigint, p_queue text, p_lock_wait_ms integer DEFAULT 20)
RETURNS integer
LANGUAGE plpgsql
SET enable_seqscan = off
AS $$
DECLARE
    g       record;
    v_now   timestamptz;
    v_floor timestamptz;
    v_min   timestamptz;
    v_n     integer := 0;
BEGIN
    PERFORM set_config('lock_timeout', p_lock_wait_ms || 'ms', true);
    PERFORM pg_advisory_xact_lock(queen.claim_floor_key(p_queue));
    PERFORM set_config('lock_timeout', '0', true);
    v_now := clock_timestamp();
    -- Read after the lock: every push and reset that held it has committed.
    FOR g IN SELECT cg.consumer_group FROM queen.consumer_groups cg WHERE cg.queue_name = p_queue LOOP
        v_floor := queen.claim_floor(p_queue_id, g.consumer_group);
        SELECT min(lc.ready_at) INTO v_min FROM queen.log_consumers lc
         WHERE lc.queue_id = p_queue_id AND lc.consumer_group = g.consumer_group AND lc.ready_at >= v_floor;
        v_min := least(v_min, v_now);
        IF v_min > v_floor THEN
            INSERT INTO queen.claim_floors (queue_id, consumer_group, floor)
            VALUES (p_queue_id, g.consumer_group, v_min);
            v_n := v_n + 1;
        END IF;
    END LOOP;
    RETURN v_n;
END;
$$;
COMMENT ON FUNCTION queen.raise_claim_floor(bigint, text, integer) IS
  'Raises the claim floors of a queue''s groups to their oldest ready_at (under the queue''s floor lock).';

-- queen.raise_claim_floors(): raises every queue's floors, one short transaction per queue;
-- a queue whose lock is busy is left for the next call. OUT: floors raised, queues skipped.
-- CALL it outside a transaction block.
CREATE OR REPLACE PROCEDURE queen.raise_claim_floors(INOUT raised integer DEFAULT 0, INOUT skipped integer DEFAULT 0)
LANGUAGE plpgsql
AS $$
DECLARE
    q record;
BEGIN
    raised := 0;
    skipped := 0;
    FOR q IN
        SELECT qu.id, qu.name FROM queen.queues qu
         WHERE EXISTS (SELECT 1 FROM queen.consumer_groups cg WHERE cg.queue_name = qu.name)
         ORDER BY qu.id
    LOOP
        BEGIN
            raised := raised + queen.raise_claim_floor(q.id, q.name);
        EXCEPTION WHEN lock_not_available THEN
            skipped := skipped + 1;
        END;
        COMMIT;
    END LOOP;
END;
$$;
COMMENT ON PROCEDURE queen.raise_claim_floors(integer, integer) IS
  'Raises the claim floors of every queue, one transaction per queue (housekeeping leader).';
