-- Consumer-group registration.
-- queen.register_group(queue name, group, start): records the group's subscription start
--   on its first pop of the queue (NULL = from the beginning; a start in the future is
--   taken as now) and gives it a cursor on every existing partition, placed before the
--   first message created at or after the start. Idempotent: a registered group keeps
--   its start, and its last_seen_at is refreshed (at most every 10 s). When it registers it
--   resets the group's claim floor and takes the queue row FOR UPDATE (30_partitions.sql).

-- queen.group_registration_current(queue, group): one row, whether queen.register_group would
-- change nothing now: the group is registered on the queue and was seen within the last 10 s.
-- The pops join it to the statement that reads their queue and call queen.register_group only
-- when it is not (56_pop_fused.sql, ext/pop_fused.c). A set-returning sql function, so that
-- the planner inlines it into the caller's plan (a scalar one holding a subquery is not).
CREATE OR REPLACE FUNCTION queen.group_registration_current(p_queue text, p_group text)
RETURNS TABLE(current boolean)
LANGUAGE sql STABLE ROWS 1
AS $$
    SELECT EXISTS (SELECT 1 FROM queen.consumer_groups g
                    WHERE g.queue_name = p_queue AND g.consumer_group = p_group
                      AND g.last_seen_at >= now() - interval '10 seconds')
$$;
COMMENT ON FUNCTION queen.group_registration_current(text, text) IS
  'Whether queen.register_group would change nothing now: the group is registered and was seen within 10 s.';

CREATE OR REPLACE FUNCTION queen.register_group(p_queue text, p_group text, p_start timestamptz)
RETURNS void
LANGUAGE plpgsql
SET jit = off
AS $$
DECLARE
    v_queue_id bigint;
    v_start    timestamptz := CASE WHEN p_start IS NULL THEN NULL ELSE least(p_start, now()) END;
BEGIN
    IF (SELECT r.current FROM queen.group_registration_current(p_queue, p_group) r) THEN
        RETURN;
    END IF;
    -- Activity for the idle-group expiry, written at most every 10 s per (queue, group).
    UPDATE queen.consumer_groups SET last_seen_at = now()
     WHERE queue_name = p_queue AND consumer_group = p_group;
    IF FOUND THEN
        RETURN;
    END IF;
    -- New cursors may hold messages older than the group's floor of a former registration
    -- (53_claim_floor.sql); the floor lock comes first, as in pushes.
    PERFORM queen.reset_claim_floor(p_queue, p_group);
    -- Waits for a concurrent creation of this queue (30_partitions.sql), then locks its row.
    PERFORM pg_advisory_xact_lock(queen.queue_lock_key(p_queue));
    SELECT id INTO v_queue_id FROM queen.queues WHERE name = p_queue FOR UPDATE;
    INSERT INTO queen.consumer_groups (queue_name, consumer_group, subscription_at)
    VALUES (p_queue, p_group, v_start)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND OR v_queue_id IS NULL THEN
        RETURN;
    END IF;
    INSERT INTO queen.log_consumers (partition_id, consumer_group, queue_id, committed)
    SELECT p.id, p_group, v_queue_id,
           CASE WHEN v_start IS NULL THEN 0
                ELSE coalesce((SELECT s.last_offset FROM queen.log_segments s
                                WHERE s.partition_id = p.id AND s.created_at < v_start
                                ORDER BY s.last_offset DESC LIMIT 1), 0)
           END
      FROM queen.log_partitions p
     WHERE p.queue_id = v_queue_id
    ON CONFLICT DO NOTHING;
    -- A push in flight to one of these partitions did not see the new cursors: wait for it
    -- (partition rows in the pushers' lock order), then compute ready_at with its messages.
    PERFORM 1 FROM queen.log_partitions p WHERE p.queue_id = v_queue_id
     ORDER BY p.name COLLATE "C" FOR SHARE;
    -- The group's cursors in partition order, as every other locker of several cursors takes
    -- them (acks, seeks, lease extensions): an UPDATE alone locks them in scan order and can
    -- deadlock with a lease extension of a two-partition lease.
    PERFORM 1 FROM queen.log_consumers lc WHERE lc.queue_id = v_queue_id AND lc.consumer_group = p_group
     ORDER BY lc.partition_id FOR UPDATE;
    UPDATE queen.log_consumers lc SET ready_at = queen.cursor_ready_at(lc.partition_id, lc.committed)
     WHERE lc.queue_id = v_queue_id AND lc.consumer_group = p_group;
END;
$$;
COMMENT ON FUNCTION queen.register_group(text, text, timestamptz) IS
  'Records a group''s subscription start on its first pop and creates its cursors.';

-- queen.register_group_from(queue, group, start, registered_at): queen.register_group, where a
-- registration this call creates records registered_at (when given) as its creation time: a
-- proxy registers a group subscribed from "now" on every shard with its own now, so each shard
-- lists it as subscribed from its registration ('new'), as one database does.
CREATE OR REPLACE FUNCTION queen.register_group_from(p_queue text, p_group text, p_start timestamptz,
                                                     p_registered_at timestamptz)
RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM queen.register_group(p_queue, p_group, p_start);
    IF p_registered_at IS NOT NULL THEN
        UPDATE queen.consumer_groups g SET created_at = p_registered_at
         WHERE g.queue_name = p_queue AND g.consumer_group = p_group
           AND g.created_at = now();  -- inserted by this transaction
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.register_group_from(text, text, timestamptz, timestamptz) IS
  'queen.register_group, a registration it creates dated registered_at when given (registrations by a proxy).';
