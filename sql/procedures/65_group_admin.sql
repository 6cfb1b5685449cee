-- Consumer-group administration (docs/consumer-groups.md).
-- Every operation here that moves or drops a cursor also releases its lease and resets its
-- attempt counter and retry delay: an ack under the released lease is then resolved by the
-- ack rules against the new cursor (unresolvable above it, noop/already committed below).
--
-- queen.seek_group(queue, group, partition, to_end, at) -> (status, partitions_updated, newest_at)
--   Moves the group's cursor on every partition of the queue (partition NULL) or on one
--   partition: to the partition's last offset (to_end) or onto the last message created at
--   or before `at` (queen.offset_at_time, inclusive) — backwards too (replay).
--   Exactly one of to_end = true and at IS NOT NULL must be given (else SQLSTATE 22023).
--   status: 'ok' | 'queue_not_found' | 'partition_not_found' | 'group_not_found' (the
--   group has neither a subscription record nor a cursor on the queue). A refused call
--   changes nothing. partitions_updated counts the cursors set (moved or not). newest_at: for
--   one partition, the createdAt of its newest message (NULL when it has none, and for a queue).
-- queen.delete_group(group, queue, delete_metadata) -> one row per queue touched:
--   (queue_name, deleted_partitions, metadata_deleted). queue NULL = every queue where the
--   group has a subscription record or a cursor. Drops the group's cursors (and leases).
--   With delete_metadata the subscription record goes too (the next pop records a new
--   start); without it every cursor is set back to the recorded start, as new, on every
--   partition (queen.offset_at_time, exclusive; a missing cursor is created), so the group
--   consumes again from there — only last_claimed_at survives, so the housekeeping's idle
--   clock keeps the group's real last activity. deleted_partitions counts the cursors
--   dropped or set back. An unknown group touches nothing and returns no row.
-- Tenancy: delete_group and set_group_subscription take a trailing scope
--   (sql/procedures/21_tenancy.sql) and touch only the queues of that tenant; delete_group
--   names them by their stored keys. seek_group takes a stored key, which names its tenant.
-- queen.set_group_subscription(group, at) -> (queues_updated, subscription_at)
--   Rewrites the start time of the group on every queue where it has a subscription
--   record (a time in the future is taken as now, as on registration). Cursors do not
--   move: the start is used when cursors are set back or created (a later delete without
--   deleteMetadata). queues_updated = 0: the group is registered nowhere.
-- Lock order (same as push, pop and ack): queue rows FOR UPDATE in name order (C
--   collation), then cursor rows FOR UPDATE in partition-id order, then subscription
--   records in queue-name order.

DROP FUNCTION IF EXISTS queen.seek_group(text, text, text, boolean, timestamptz);  -- it gained newest_at
CREATE FUNCTION queen.seek_group(
    p_queue text, p_group text, p_partition text, p_to_end boolean, p_at timestamptz)
RETURNS TABLE(status text, partitions_updated integer, newest_at timestamptz)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_queue_id     bigint;
    v_partition_id bigint;
BEGIN
    IF (p_to_end IS TRUE) = (p_at IS NOT NULL) THEN
        RAISE EXCEPTION 'seek_group: give either to_end or a time stamp' USING ERRCODE = '22023';
    END IF;
    partitions_updated := 0;
    SELECT q.id INTO v_queue_id FROM queen.queues q WHERE q.name = p_queue;
    IF v_queue_id IS NULL THEN
        status := 'queue_not_found';
        RETURN NEXT;
        RETURN;
    END IF;
    IF p_partition IS NOT NULL THEN
        SELECT p.id INTO v_partition_id FROM queen.log_partitions p
         WHERE p.queue_id = v_queue_id AND p.name = p_partition;
        IF v_partition_id IS NULL THEN
            status := 'partition_not_found';
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM queen.consumer_groups g
                    WHERE g.queue_name = p_queue AND g.consumer_group = p_group)
       AND NOT EXISTS (SELECT 1 FROM queen.log_consumers lc
                        WHERE lc.queue_id = v_queue_id AND lc.consumer_group = p_group) THEN
        status := 'group_not_found';
        RETURN NEXT;
        RETURN;
    END IF;

    -- A seek can give cursors older messages: the floor goes first (53_claim_floor.sql).
    PERFORM queen.reset_claim_floor(p_queue, p_group);

    -- A known group has a cursor on every partition; create one that is missing.
    INSERT INTO queen.log_consumers (partition_id, consumer_group, queue_id, committed)
    SELECT p.id, p_group, v_queue_id, 0
      FROM queen.log_partitions p
     WHERE p.queue_id = v_queue_id AND (v_partition_id IS NULL OR p.id = v_partition_id)
    ON CONFLICT DO NOTHING;

    PERFORM 1 FROM queen.log_consumers lc
     WHERE lc.queue_id = v_queue_id AND lc.consumer_group = p_group
       AND (v_partition_id IS NULL OR lc.partition_id = v_partition_id)
     ORDER BY lc.partition_id
       FOR UPDATE;

    UPDATE queen.log_consumers lc
       SET committed = CASE WHEN p_to_end THEN queen.partition_last_offset(p.id)
                            ELSE queen.offset_at_time(lc.partition_id, p_at, true) END,
           lease_id = NULL, lease_end = NULL, lease_expires_at = NULL, lease_counted = false,
           attempts = 0, attempts_offset = 0, retry_at = NULL,
           delivered_to = 0  -- a replay asked for is not a redelivery (0019_cursor_delivered_to.sql)
      FROM queen.log_partitions p
     WHERE p.id = lc.partition_id
       AND lc.queue_id = v_queue_id AND lc.consumer_group = p_group
       AND (v_partition_id IS NULL OR lc.partition_id = v_partition_id);
    GET DIAGNOSTICS partitions_updated = ROW_COUNT;
    IF v_partition_id IS NOT NULL THEN
        SELECT CASE WHEN h.last_offset > 0 THEN h.last_created_at END INTO newest_at
          FROM queen.partition_head(v_partition_id) h;
    END IF;
    status := 'ok';
    RETURN NEXT;
END;
$$;
COMMENT ON FUNCTION queen.seek_group(text, text, text, boolean, timestamptz) IS
  'Moves a group''s cursors on a queue (or one partition) to the end or to a time; releases leases.';

DROP FUNCTION IF EXISTS queen.delete_group(text, text, boolean);  -- it gained the tenant scope
CREATE OR REPLACE FUNCTION queen.delete_group(p_group text, p_queue text, p_delete_metadata boolean,
                                              p_scope text DEFAULT NULL)
RETURNS TABLE(queue_name text, deleted_partitions integer, metadata_deleted boolean)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    r          record;
    v_has_meta boolean;
    v_start    timestamptz;
BEGIN
    -- A restart from the start gives cursors older messages: the queues' floor locks come
    -- first, before any row lock (53_claim_floor.sql).
    PERFORM queen.lock_claim_floors_shared(ARRAY(
        SELECT g.queue_name FROM queen.consumer_groups g
         WHERE g.consumer_group = p_group AND (p_queue IS NULL OR g.queue_name = p_queue)
           AND queen.in_tenant_scope(queen.queue_key_tenant(g.queue_name), p_scope)));
    PERFORM 1 FROM queen.queues q
     WHERE (p_queue IS NULL OR q.name = p_queue) AND queen.in_tenant_scope(q.tenant, p_scope)
       AND (EXISTS (SELECT 1 FROM queen.consumer_groups g
                     WHERE g.queue_name = q.name AND g.consumer_group = p_group)
            OR EXISTS (SELECT 1 FROM queen.log_consumers lc
                        WHERE lc.queue_id = q.id AND lc.consumer_group = p_group))
     ORDER BY q.name COLLATE "C"
       FOR UPDATE;
    PERFORM 1 FROM queen.log_consumers lc
      JOIN queen.queues q ON q.id = lc.queue_id
     WHERE lc.consumer_group = p_group AND (p_queue IS NULL OR q.name = p_queue)
       AND queen.in_tenant_scope(q.tenant, p_scope)
     ORDER BY lc.partition_id
       FOR UPDATE OF lc;

    FOR r IN
        SELECT n.name, q.id AS queue_id
          FROM (SELECT g.queue_name AS name FROM queen.consumer_groups g
                 WHERE g.consumer_group = p_group AND (p_queue IS NULL OR g.queue_name = p_queue)
                   AND queen.in_tenant_scope(queen.queue_key_tenant(g.queue_name), p_scope)
                UNION
                SELECT q2.name FROM queen.log_consumers lc
                  JOIN queen.queues q2 ON q2.id = lc.queue_id
                 WHERE lc.consumer_group = p_group AND (p_queue IS NULL OR q2.name = p_queue)
                   AND queen.in_tenant_scope(q2.tenant, p_scope)) n
          LEFT JOIN queen.queues q ON q.name = n.name
         ORDER BY n.name COLLATE "C"
    LOOP
        queue_name := r.name;
        deleted_partitions := 0;
        metadata_deleted := false;
        v_has_meta := false;
        v_start := NULL;
        SELECT true, g.subscription_at INTO v_has_meta, v_start
          FROM queen.consumer_groups g
         WHERE g.queue_name = r.name AND g.consumer_group = p_group
           FOR UPDATE;
        v_has_meta := coalesce(v_has_meta, false);
        IF r.queue_id IS NOT NULL AND v_has_meta AND NOT p_delete_metadata THEN
            -- Consume again from the recorded start: every cursor is set back to it, as new
            -- (no lease, no attempts, no retry delay; last_claimed_at is history and stays).
            PERFORM queen.reset_claim_floor(r.name, p_group);
            UPDATE queen.log_consumers lc
               SET committed = queen.offset_at_time(lc.partition_id, v_start, false),
                   lease_id = NULL, lease_end = NULL, lease_expires_at = NULL, lease_counted = false,
                   attempts = 0, attempts_offset = 0, retry_at = NULL, delivered_to = 0
             WHERE lc.queue_id = r.queue_id AND lc.consumer_group = p_group;
            GET DIAGNOSTICS deleted_partitions = ROW_COUNT;
            INSERT INTO queen.log_consumers (partition_id, consumer_group, queue_id, committed)
            SELECT p.id, p_group, r.queue_id, queen.offset_at_time(p.id, v_start, false)
              FROM queen.log_partitions p
             WHERE p.queue_id = r.queue_id
            ON CONFLICT DO NOTHING;
        ELSIF r.queue_id IS NOT NULL THEN
            DELETE FROM queen.log_consumers lc
             WHERE lc.queue_id = r.queue_id AND lc.consumer_group = p_group;
            GET DIAGNOSTICS deleted_partitions = ROW_COUNT;
        END IF;
        IF p_delete_metadata THEN
            DELETE FROM queen.consumer_groups g
             WHERE g.queue_name = r.name AND g.consumer_group = p_group;
            metadata_deleted := FOUND;
        END IF;
        RETURN NEXT;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION queen.delete_group(text, text, boolean, text) IS
  'Drops a group''s cursors and leases (and with delete_metadata its start); else restarts it from its start.';

DROP FUNCTION IF EXISTS queen.set_group_subscription(text, timestamptz);  -- it gained the tenant scope
CREATE OR REPLACE FUNCTION queen.set_group_subscription(p_group text, p_at timestamptz, p_scope text DEFAULT NULL)
RETURNS TABLE(queues_updated integer, subscription_at timestamptz)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_at timestamptz := least(p_at, now());
BEGIN
    IF p_at IS NULL THEN
        RAISE EXCEPTION 'set_group_subscription: a time stamp is required' USING ERRCODE = '22023';
    END IF;
    PERFORM 1 FROM queen.consumer_groups g
     WHERE g.consumer_group = p_group AND queen.in_tenant_scope(queen.queue_key_tenant(g.queue_name), p_scope)
     ORDER BY g.queue_name COLLATE "C"
       FOR UPDATE;
    UPDATE queen.consumer_groups g SET subscription_at = v_at
     WHERE g.consumer_group = p_group AND queen.in_tenant_scope(queen.queue_key_tenant(g.queue_name), p_scope);
    GET DIAGNOSTICS queues_updated = ROW_COUNT;
    subscription_at := v_at;
    RETURN NEXT;
END;
$$;
COMMENT ON FUNCTION queen.set_group_subscription(text, timestamptz, text) IS
  'Rewrites a group''s subscription start on every queue where it is registered.';
