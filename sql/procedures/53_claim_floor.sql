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
--     raises each group's floor to least(its oldest ready_at, the clock, the start of every
--     transaction that holds the queue's push lock);
--   * pushes (queen.push, the DLQ requeue) hold their queues' push locks shared and stamp
--     createdAt no earlier than the clock after taking them: a push that held the lock when a
--     raise looked is older than its start, one that took it later is newer than the raise's
--     clock, one that had let go has committed and its ready_at is seen. Acknowledgements, pops,
--     dead-lettering and retention only move a cursor forward, onto messages no older than its
--     ready_at;
--   * whatever can give a cursor older messages than it had (registration, seeks, a group
--     restarted from its start, housekeeping's repairs) calls queen.reset_claim_floor, which
--     holds the queue's reset lock shared and writes the floor -infinity; a raise holds the
--     reset lock exclusively, so it sees a reset's cursors or is followed by its -infinity.
-- Nothing here makes a push wait: push locks are only ever taken shared, and the raise reads
-- who holds them (pg_locks). Lock order: these locks come before partition and cursor rows.

-- queen.claim_floor_key(queue name): the key of a queue's push lock (transaction advisory
-- lock, shared by every push to the queue).
CREATE OR REPLACE FUNCTION queen.claim_floor_key(p_queue text)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT queen.queue_advisory_key(x'5146'::integer, p_queue) $$;
COMMENT ON FUNCTION queen.claim_floor_key(text) IS
  'Advisory lock key that pushes to a queue hold shared, so the claim-floor raise can see them.';

-- queen.claim_floor_reset_key(queue name): the key of a queue's reset lock (shared by
-- resets, exclusive for a raise).
CREATE OR REPLACE FUNCTION queen.claim_floor_reset_key(p_queue text)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT queen.queue_advisory_key(x'5152'::integer, p_queue) $$;
COMMENT ON FUNCTION queen.claim_floor_reset_key(text) IS
  'Advisory lock key ordering a queue''s claim-floor resets with its raises.';

-- queen.claim_floor(queue id, group): the newest floor, -infinity when there is none.
CREATE OR REPLACE FUNCTION queen.claim_floor(p_queue_id bigint, p_group text)
RETURNS timestamptz
-- plpgsql, not sql: a sql function with a subquery is not inlined, so each pop would plan it
-- again; plpgsql keeps the plan for the session.
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN coalesce((SELECT f.floor FROM queen.claim_floors f
                      WHERE f.queue_id = p_queue_id AND f.consumer_group = p_group
                      ORDER BY f.seq DESC LIMIT 1), '-infinity');
END;
$$;
COMMENT ON FUNCTION queen.claim_floor(bigint, text) IS
  'Lower bound of every ready_at of a group''s cursors on a queue (-infinity when unknown).';

-- queen.lock_claim_floors_shared(queue names): the push locks of these queues, shared, for
-- the rest of the transaction. Nobody takes them exclusively: this never waits.
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
  'Holds the push locks of queues shared until commit (pushes; see queen.raise_claim_floor).';

-- queen.reset_claim_floor(queue name, group): the group's floor becomes -infinity, before
-- or after its cursors are given older messages in the same transaction.
CREATE OR REPLACE FUNCTION queen.reset_claim_floor(p_queue text, p_group text)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_queue_id bigint;
BEGIN
    PERFORM pg_advisory_xact_lock_shared(queen.claim_floor_reset_key(p_queue));
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
-- the queue to least(its oldest ready_at, the clock, the start of every transaction holding the
-- queue's push lock); the number of floors raised. Raises lock_not_available when resets hold
-- the queue's reset lock longer than the wait (milliseconds). Pushes never wait for it.
CREATE OR REPLACE FUNCTION queen.raise_claim_floor(p_queue_id bigint, p_queue text, p_lock_wait_ms integer DEFAULT 1000)
RETURNS integer
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
AS $$
DECLARE
    g       record;
    v_key   bigint := queen.claim_floor_key(p_queue);
    v_bound timestamptz;
    v_floor timestamptz;
    v_min   timestamptz;
    v_n     integer := 0;
BEGIN
    PERFORM set_config('lock_timeout', p_lock_wait_ms || 'ms', true);
    PERFORM pg_advisory_xact_lock(queen.claim_floor_reset_key(p_queue));
    PERFORM set_config('lock_timeout', '0', true);
    -- The bound: the clock, then the pushes holding the push lock now (a push that takes it
    -- later stamps a later clock). pg_stat_activity is read afresh, not from this
    -- transaction's cached copy.
    v_bound := clock_timestamp();
    PERFORM pg_stat_clear_snapshot();
    SELECT least(v_bound, min(coalesce(a.xact_start, '-infinity'))) INTO v_bound
      FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
       AND l.classid = (v_key >> 32)::oid AND l.objid = (v_key & x'ffffffff'::bigint)::oid AND l.objsubid = 1
       AND l.pid <> pg_backend_pid();
    v_bound := coalesce(v_bound, '-infinity');
    -- Read after that: every push that had let go of the lock has committed.
    FOR g IN SELECT cg.consumer_group FROM queen.consumer_groups cg WHERE cg.queue_name = p_queue LOOP
        v_floor := queen.claim_floor(p_queue_id, g.consumer_group);
        SELECT min(lc.ready_at) INTO v_min FROM queen.log_consumers lc
         WHERE lc.queue_id = p_queue_id AND lc.consumer_group = g.consumer_group AND lc.ready_at >= v_floor;
        v_min := least(v_min, v_bound);
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
  'Raises the claim floors of a queue''s groups to their oldest ready_at, below every push in flight.';

-- queen.raise_claim_floors(): raises every queue's floors, one short transaction per queue;
-- a queue whose reset lock stays busy is left for the next call. OUT: floors raised, queues skipped.
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
