-- Housekeeping, run by exactly one broker at a time (the holder of the session advisory lock
-- taken in broker/services/housekeeper.cpp), every QUEEN_HOUSEKEEPING_INTERVAL_MS.
-- queen.run_housekeeping(group_idle_seconds, partition_idle_seconds, batch) → jsonb counts:
--   * retention (queues with retentionEnabled): whole segments only, never one split —
--     retentionSeconds: segments older than that, consumed or not;
--     completedRetentionSeconds: segments older than that AND consumed by every consumer
--     group of the partition (a partition nobody consumes keeps everything);
--   * dedup-window expiry: dedup entries older than their queue's dedupWindowSeconds;
--   * maxWaitTimeSeconds: messages a group has not consumed that long go to its dead letters
--     (reason expired) even when the group does not pop (pops do the same when they claim);
--     on a queue no consumer has popped yet, once a message has waited that long, the queue
--     mode's group is registered first (from the beginning, as its first pop would), so they
--     expire for the queue mode;
--   * consumer groups idle longer than group_idle_seconds (0 = never: no claim and no pop,
--     which is recorded with a 10 s granularity) are dropped — cursors and subscription — so
--     an abandoned group cannot hold completed retention back forever;
--   * partitions with no stored message, no dead letter, no live lease, no stream state and no
--     push for partition_idle_seconds are reclaimed with their cursors and dedup entries;
--   * claim floors (53_claim_floor.sql): reset where a cursor is below its group's floor,
--     and compacted to the newest per group.
-- Each task is a function of its own, called in this order by queen.run_housekeeping; each
-- touches at most p_batch rows per run, so one run stays a short transaction.

-- queen.expire_idle_groups(idle_seconds, batch): drops consumer groups (cursors and
-- subscription) without a claim or pop for idle_seconds and without a live lease; 0 = never.
-- Returns the cursors removed.
CREATE OR REPLACE FUNCTION queen.expire_idle_groups(p_group_idle_seconds integer, p_batch integer)
RETURNS bigint
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_groups bigint := 0;
BEGIN
    IF p_group_idle_seconds > 0 THEN
        WITH idle AS (
            SELECT c.queue_id, c.consumer_group
              FROM queen.log_consumers c
             WHERE c.consumer_group <> '__QUEUE_MODE__'
             GROUP BY c.queue_id, c.consumer_group
            HAVING coalesce(max(c.last_claimed_at), '-infinity') < now() - make_interval(secs => p_group_idle_seconds)
               AND bool_and(c.lease_id IS NULL OR c.lease_expires_at <= now())
             LIMIT p_batch
        ), dropped_meta AS (
            DELETE FROM queen.consumer_groups g
             USING idle i JOIN queen.queues q ON q.id = i.queue_id
             WHERE g.queue_name = q.name AND g.consumer_group = i.consumer_group
               AND g.last_seen_at < now() - make_interval(secs => p_group_idle_seconds)
            RETURNING g.consumer_group, q.id AS queue_id
        )
        DELETE FROM queen.log_consumers c
         USING dropped_meta d
         WHERE c.queue_id = d.queue_id AND c.consumer_group = d.consumer_group;
        GET DIAGNOSTICS v_groups = ROW_COUNT;
    END IF;
    RETURN v_groups;
END;
$$;
COMMENT ON FUNCTION queen.expire_idle_groups(integer, integer) IS
  'Housekeeping: drops consumer groups idle longer than the given seconds (0 = never); returns the cursors removed.';

-- queen.partition_walk(position, batch): the next `batch` partition ids after the position
-- (a sequence of migration 21), in id order, continuing from the lowest id when the walk
-- reaches the end, so that fewer partitions than the batch are all returned every time; moves
-- the position to the last id returned.
CREATE OR REPLACE FUNCTION queen.partition_walk(p_position regclass, p_batch integer)
RETURNS bigint[]
LANGUAGE plpgsql
AS $$
DECLARE
    v_after bigint := coalesce(pg_sequence_last_value(p_position), 0);
    v_ids   bigint[];
BEGIN
    v_ids := ARRAY(SELECT w.id
                     FROM ((SELECT p.id, 0 AS pass FROM queen.log_partitions p
                             WHERE p.id > v_after ORDER BY p.id LIMIT p_batch)
                           UNION ALL
                           (SELECT p.id, 1 AS pass FROM queen.log_partitions p
                             WHERE p.id <= v_after ORDER BY p.id LIMIT p_batch)) w
                    ORDER BY w.pass, w.id
                    LIMIT p_batch);
    IF cardinality(v_ids) > 0 THEN
        PERFORM setval(p_position, v_ids[cardinality(v_ids)]);
    END IF;
    RETURN v_ids;
END;
$$;
COMMENT ON FUNCTION queen.partition_walk(regclass, integer) IS
  'Housekeeping: the next batch of partition ids after a walk''s position, wrapping at the end; moves the position.';

-- queen.repair_cursors(batch): the safety nets of the cursors. Every registered group gets a
-- cursor on every partition of its queue, and a cursor with waiting messages gets its
-- ready_at (52_cursor_ready.sql). The creation and maintenance paths guarantee both; this
-- repairs a database written by anything else (a restore, a manual UPDATE). A round checks
-- the next `batch` partitions of its walk (queen.partition_walk), so it costs its batch
-- whatever the number of partitions. Busy cursors are skipped. Returns the cursors created.
CREATE OR REPLACE FUNCTION queen.repair_cursors(p_batch integer)
RETURNS bigint
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_repaired bigint := 0;
    v_ids      bigint[] := queen.partition_walk('queen.cursor_repair_position', p_batch);
BEGIN
    INSERT INTO queen.log_consumers (partition_id, consumer_group, queue_id, committed)
    SELECT p.id, g.consumer_group, p.queue_id, queen.offset_at_time(p.id, g.subscription_at, false)
      FROM unnest(v_ids) AS u(id)
      JOIN queen.log_partitions p ON p.id = u.id
      JOIN queen.queues q ON q.id = p.queue_id
      JOIN queen.consumer_groups g ON g.queue_name = q.name
     WHERE NOT EXISTS (SELECT 1 FROM queen.log_consumers c
                        WHERE c.partition_id = p.id AND c.consumer_group = g.consumer_group)
     LIMIT p_batch
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS v_repaired = ROW_COUNT;

    WITH stale AS (
        SELECT lc.partition_id, lc.consumer_group
          FROM unnest(v_ids) AS u(id)
          JOIN queen.log_consumers lc ON lc.partition_id = u.id
         WHERE lc.ready_at IS NULL AND queen.partition_last_offset(u.id) > lc.committed
         LIMIT p_batch
           FOR UPDATE OF lc SKIP LOCKED
    )
    UPDATE queen.log_consumers lc
       SET ready_at = queen.cursor_ready_at(lc.partition_id, lc.committed)
      FROM stale s
     WHERE lc.partition_id = s.partition_id AND lc.consumer_group = s.consumer_group;
    RETURN v_repaired;
END;
$$;
COMMENT ON FUNCTION queen.repair_cursors(integer) IS
  'Housekeeping: creates missing cursors of registered groups and restores missing ready_at; returns the cursors created.';

-- queen.expire_unconsumed(batch): maxWaitTimeSeconds. On a queue no consumer has popped, once
-- a message has waited that long the queue mode's group is registered (from the beginning, as
-- its first pop would; not before, so a group that pops first keeps the queue to itself).
-- Then every cursor whose head waited longer than that moves its expired messages to the dead
-- letters (reason expired), as a pop would. Returns {expired, removed: [{queue, group, kind,
-- messages}]}.
CREATE OR REPLACE FUNCTION queen.expire_unconsumed(p_batch integer)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_expired bigint := 0;
    v_removed jsonb := '[]';
    v_end     bigint;
    v_n       bigint;
    c         record;
    unpopped  record;
BEGIN
    FOR unpopped IN
        SELECT q.name FROM queen.queues q
         WHERE q.max_wait_time_seconds > 0
           AND NOT EXISTS (SELECT 1 FROM queen.consumer_groups g WHERE g.queue_name = q.name)
           AND NOT EXISTS (SELECT 1 FROM queen.log_consumers lc WHERE lc.queue_id = q.id)
           AND EXISTS (SELECT 1 FROM queen.log_partitions p
                        WHERE p.queue_id = q.id
                          AND (SELECT s.created_at FROM queen.log_segments s
                                WHERE s.partition_id = p.id ORDER BY s.last_offset LIMIT 1)
                              <= now() - make_interval(secs => q.max_wait_time_seconds))
         LIMIT p_batch
    LOOP
        PERFORM queen.register_group(unpopped.name, '__QUEUE_MODE__', NULL);
    END LOOP;

    FOR c IN
        SELECT lc.partition_id, lc.consumer_group, lc.queue_id, lc.committed, q.max_wait_time_seconds AS max_wait,
               q.name AS queue_name
          FROM queen.log_consumers lc
          JOIN queen.queues q ON q.id = lc.queue_id
          JOIN queen.log_partitions p ON p.id = lc.partition_id
         WHERE q.max_wait_time_seconds > 0
           AND queen.partition_last_offset(p.id) > lc.committed
           AND (lc.lease_id IS NULL OR lc.lease_expires_at <= now())
           AND (SELECT s.created_at FROM queen.log_segments s
                 WHERE s.partition_id = lc.partition_id AND s.last_offset > lc.committed
                 ORDER BY s.last_offset LIMIT 1) <= now() - make_interval(secs => q.max_wait_time_seconds)
         LIMIT p_batch
           FOR UPDATE OF lc SKIP LOCKED
    LOOP
        SELECT s.last_offset INTO v_end FROM queen.log_segments s
         WHERE s.partition_id = c.partition_id AND s.last_offset > c.committed
           AND s.created_at <= now() - make_interval(secs => c.max_wait)
         ORDER BY s.last_offset DESC LIMIT 1;
        v_n := queen.dead_letter_range(c.queue_id, c.partition_id, c.committed + 1, v_end,
            c.consumer_group, 'not consumed within maxWaitTimeSeconds', 0, 'expired');
        v_expired := v_expired + v_n;
        PERFORM queen.record_eviction(c.partition_id, v_n);
        IF v_n > 0 THEN
            v_removed := v_removed || jsonb_build_object('queue', c.queue_name, 'group', c.consumer_group,
                                                         'kind', 'expired', 'messages', v_n);
        END IF;
        UPDATE queen.log_consumers lc
           SET committed = v_end, attempts = 0, attempts_offset = 0, retry_at = NULL,
               lease_id = NULL, lease_end = NULL, lease_expires_at = NULL, lease_counted = false
         WHERE lc.partition_id = c.partition_id AND lc.consumer_group = c.consumer_group;
    END LOOP;
    RETURN jsonb_build_object('expired', v_expired, 'removed', v_removed);
END;
$$;
COMMENT ON FUNCTION queen.expire_unconsumed(integer) IS
  'Housekeeping: dead-letters messages not consumed within maxWaitTimeSeconds; returns {expired, removed}.';

-- queen.apply_retention(batch): on queues with retentionEnabled, whole segments only, never
-- one split: retentionSeconds deletes segments older than that, consumed or not;
-- completedRetentionSeconds those older than that AND consumed by every group of the
-- partition (a partition nobody consumes keeps everything). Deletes go through
-- queen.delete_segments. Returns {retention, completed, removed: [{queue, kind, messages}]}.
CREATE OR REPLACE FUNCTION queen.apply_retention(p_batch integer)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_retention bigint;
    v_completed bigint;
    v_removed   jsonb := '[]';
    v_doomed_pids    bigint[];
    v_doomed_offsets bigint[];
BEGIN
    SELECT array_agg(s.partition_id), array_agg(s.last_offset) INTO v_doomed_pids, v_doomed_offsets
      FROM (SELECT s.partition_id, s.last_offset
              FROM queen.log_segments s
              JOIN queen.log_partitions p ON p.id = s.partition_id
              JOIN queen.queues q ON q.id = p.queue_id
             WHERE q.retention_enabled AND q.retention_seconds > 0
               AND s.created_at < now() - make_interval(secs => q.retention_seconds)
             LIMIT p_batch) s;
    v_removed := v_removed || queen.record_retention(v_doomed_pids, v_doomed_offsets, 'retention');
    v_retention := queen.delete_segments(v_doomed_pids, v_doomed_offsets);

    WITH consumed AS (
        SELECT c.partition_id, min(c.committed) AS upto
          FROM queen.log_consumers c
         GROUP BY c.partition_id
    )
    SELECT array_agg(s.partition_id), array_agg(s.last_offset) INTO v_doomed_pids, v_doomed_offsets
      FROM (SELECT s.partition_id, s.last_offset
              FROM queen.log_segments s
              JOIN consumed k ON k.partition_id = s.partition_id
              JOIN queen.log_partitions p ON p.id = s.partition_id
              JOIN queen.queues q ON q.id = p.queue_id
             WHERE q.retention_enabled AND q.completed_retention_seconds > 0
               AND s.last_offset <= k.upto
               AND s.created_at < now() - make_interval(secs => q.completed_retention_seconds)
             LIMIT p_batch) s;
    v_removed := v_removed || queen.record_retention(v_doomed_pids, v_doomed_offsets, 'completed');
    v_completed := queen.delete_segments(v_doomed_pids, v_doomed_offsets);
    RETURN jsonb_build_object('retention', v_retention, 'completed', v_completed, 'removed', v_removed);
END;
$$;
COMMENT ON FUNCTION queen.apply_retention(integer) IS
  'Housekeeping: retention of whole segments (retentionSeconds, completedRetentionSeconds); returns {retention, completed, removed}.';

-- queen.expire_dedup(batch): deletes dedup entries older than their queue's
-- dedupWindowSeconds. Returns the entries deleted.
-- A push may rewrite an expired entry (its id pushed again) while this runs: the DELETE
-- waits for it and then re-checks its own conditions on the row's new version, so the age
-- is one of them; a key match alone would delete the fresh entry, and the id would be
-- stored twice inside its window (regress/isolation/specs/push_dedup_expiry.spec).
CREATE OR REPLACE FUNCTION queen.expire_dedup(p_batch integer)
RETURNS bigint
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_dedup bigint := 0;
BEGIN
    WITH expired AS (
        SELECT d.partition_id, d.transaction_id, q.dedup_window_seconds AS win
          FROM queen.log_dedup d
          JOIN queen.log_partitions p ON p.id = d.partition_id
          JOIN queen.queues q ON q.id = p.queue_id
         WHERE d.created_at < now() - make_interval(secs => q.dedup_window_seconds)
         LIMIT p_batch
    )
    DELETE FROM queen.log_dedup d USING expired e
     WHERE d.partition_id = e.partition_id AND d.transaction_id = e.transaction_id
       AND d.created_at < now() - make_interval(secs => e.win);
    GET DIAGNOSTICS v_dedup = ROW_COUNT;
    RETURN v_dedup;
END;
$$;
COMMENT ON FUNCTION queen.expire_dedup(integer) IS
  'Housekeeping: deletes dedup entries older than their queue''s window; returns how many.';

-- queen.reclaim_idle_partitions(idle_seconds, batch): partitions with no stored message, no
-- dead letter, no live lease, no stream state (a lane of a stream query) and no push for
-- idle_seconds are deleted with their cursors and dedup entries; 0 = never. A round checks the next `batch` partitions of its walk
-- (queen.partition_walk). Returns the partitions reclaimed.
CREATE OR REPLACE FUNCTION queen.reclaim_idle_partitions(p_partition_idle_seconds integer, p_batch integer)
RETURNS bigint
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_parts bigint := 0;
    v_ids   bigint[];
BEGIN
    IF p_partition_idle_seconds > 0 THEN
        v_ids := queen.partition_walk('queen.partition_reclaim_position', p_batch);
        WITH idle AS (
            SELECT p.id
              FROM unnest(v_ids) AS u(id)
              JOIN queen.log_partitions p ON p.id = u.id
             WHERE coalesce(queen.partition_last_push_at(p.id), p.created_at)
                   < now() - make_interval(secs => p_partition_idle_seconds)
               AND NOT EXISTS (SELECT 1 FROM queen.log_segments s WHERE s.partition_id = p.id)
               AND NOT EXISTS (SELECT 1 FROM queen.dead_letters d WHERE d.partition_id = p.id)
               AND NOT EXISTS (SELECT 1 FROM queen.stream_lanes l WHERE l.partition_id = p.id)
               AND NOT EXISTS (SELECT 1 FROM queen.log_consumers c
                                WHERE c.partition_id = p.id AND c.lease_id IS NOT NULL AND c.lease_expires_at > now())
               FOR UPDATE OF p SKIP LOCKED
        ), gone_cursors AS (
            DELETE FROM queen.log_consumers c USING idle i WHERE c.partition_id = i.id
        ), gone_dedup AS (
            DELETE FROM queen.log_dedup d USING idle i WHERE d.partition_id = i.id
        )
        DELETE FROM queen.log_partitions p USING idle i WHERE p.id = i.id;
        GET DIAGNOSTICS v_parts = ROW_COUNT;
    END IF;
    RETURN v_parts;
END;
$$;
COMMENT ON FUNCTION queen.reclaim_idle_partitions(integer, integer) IS
  'Housekeeping: deletes empty partitions idle longer than the given seconds (0 = never); returns how many.';

-- queen.tidy_claim_floors(batch): claim floors (53_claim_floor.sql). A cursor whose ready_at
-- is below its group's floor (a repair, a database written by anything else, a server clock
-- stepped back) would not be claimed, so its group's floor goes back to -infinity; then every
-- floor but the newest of each group, and those of groups without cursors, are deleted
-- (deleting a floor only lowers it). Returns the floors reset.
CREATE OR REPLACE FUNCTION queen.tidy_claim_floors(p_batch integer)
RETURNS bigint
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_floors bigint := 0;
    c        record;
BEGIN
    FOR c IN
        SELECT q.name AS qname, cg.consumer_group AS grp
          FROM queen.consumer_groups cg
          JOIN queen.queues q ON q.name = cg.queue_name
         WHERE EXISTS (SELECT 1 FROM queen.log_consumers lc
                        WHERE lc.queue_id = q.id AND lc.consumer_group = cg.consumer_group
                          AND lc.ready_at < queen.claim_floor(q.id, cg.consumer_group))
         LIMIT p_batch
    LOOP
        PERFORM queen.reset_claim_floor(c.qname, c.grp);
        v_floors := v_floors + 1;
    END LOOP;
    DELETE FROM queen.claim_floors f
     WHERE f.seq < (SELECT max(n.seq) FROM queen.claim_floors n
                     WHERE n.queue_id = f.queue_id AND n.consumer_group = f.consumer_group)
        OR NOT EXISTS (SELECT 1 FROM queen.log_consumers lc
                        WHERE lc.queue_id = f.queue_id AND lc.consumer_group = f.consumer_group);
    RETURN v_floors;
END;
$$;
COMMENT ON FUNCTION queen.tidy_claim_floors(integer) IS
  'Housekeeping: resets claim floors that a cursor is below and deletes superseded ones; returns the floors reset.';

-- queen.run_housekeeping(group_idle_seconds, partition_idle_seconds, batch): one round of every
-- task above, in order, in the caller's transaction. Returns the counts as jsonb.
CREATE OR REPLACE FUNCTION queen.run_housekeeping(
    p_group_idle_seconds integer, p_partition_idle_seconds integer, p_batch integer DEFAULT 10000)
RETURNS jsonb
LANGUAGE plpgsql
SET jit = off
AS $$
DECLARE
    v_groups    bigint;
    v_repaired  bigint;
    v_expiry    jsonb;
    v_retention jsonb;
    v_dedup     bigint;
    v_parts     bigint;
    v_floors    bigint;
BEGIN
    v_groups := queen.expire_idle_groups(p_group_idle_seconds, p_batch);
    v_repaired := queen.repair_cursors(p_batch);
    v_expiry := queen.expire_unconsumed(p_batch);
    v_retention := queen.apply_retention(p_batch);
    v_dedup := queen.expire_dedup(p_batch) + queen.expire_shard_receipts(p_batch);
    v_parts := queen.reclaim_idle_partitions(p_partition_idle_seconds, p_batch);
    v_floors := queen.tidy_claim_floors(p_batch);
    RETURN jsonb_build_object('retentionSegments', (v_retention ->> 'retention')::bigint,
                              'completedRetentionSegments', (v_retention ->> 'completed')::bigint,
                              'dedupEntries', v_dedup, 'idleGroups', v_groups, 'reclaimedPartitions', v_parts,
                              'repairedCursors', v_repaired, 'expiredMessages', (v_expiry ->> 'expired')::bigint,
                              'resetClaimFloors', v_floors,
                              'removed', (v_expiry -> 'removed') || (v_retention -> 'removed'));
END;
$$;
COMMENT ON FUNCTION queen.run_housekeeping(integer, integer, integer) IS
  'One round of housekeeping: idle groups, cursor repair, maxWaitTimeSeconds expiry, retention, dedup expiry, idle partitions, claim floors.';
