-- A cursor's ready_at: the createdAt of its oldest waiting message (all frames of a segment
-- share one createdAt), NULL when the partition holds nothing past its committed offset.
-- Pops claim through the index on (queue, group, ready_at), so the cost of finding the
-- partition whose oldest waiting message is oldest does not grow with the partition count.
--
-- Who keeps it right:
--   * every change of committed, and every new cursor: the trigger below recomputes it, in a
--     fresh snapshot, while the statement holds the cursor row;
--   * every push (queen.push, DLQ requeue): locks every cursor of each partition that got
--     messages and sets ready_at where it is NULL. That lock is what makes the two agree: a
--     push either locks the row first (then the acknowledgement, whose update waits for the
--     push's commit, recomputes ready_at in a snapshot that sees its messages), or waits for
--     the acknowledgement's commit and then reads the row as that left it; a cursor that
--     already has a ready_at keeps it (the push's messages are newer), so only cursors
--     without one are written;
--   * a group's registration waits for in-flight pushes to its queue's partitions
--     (queen.register_group) and then computes it;
--   * housekeeping repairs any cursor with waiting messages and no ready_at (safety net).

-- queen.cursor_ready_at(partition, committed): createdAt of the first segment past committed.
CREATE OR REPLACE FUNCTION queen.cursor_ready_at(p_partition_id bigint, p_committed bigint)
RETURNS timestamptz
-- plpgsql, not sql: called from the cursor trigger on every acknowledgement, where a sql
-- function with a FROM clause would be planned again each time; plpgsql keeps the plan.
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN (SELECT s.created_at FROM queen.log_segments s
             WHERE s.partition_id = p_partition_id AND s.last_offset > p_committed
             ORDER BY s.last_offset LIMIT 1);
END;
$$;
COMMENT ON FUNCTION queen.cursor_ready_at(bigint, bigint) IS
  'createdAt of the oldest message of a partition past an offset, NULL when there is none.';

-- The same trigger stamps committed_at (migration 16) when committed moves: it is the one place
-- that sees every such change, and the row version is written anyway.
CREATE OR REPLACE FUNCTION queen.cursor_ready_trigger()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    NEW.ready_at := queen.cursor_ready_at(NEW.partition_id, NEW.committed);
    IF TG_OP = 'UPDATE' THEN
        NEW.committed_at := now();
    END IF;
    RETURN NEW;
END;
$$;
COMMENT ON FUNCTION queen.cursor_ready_trigger() IS
  'Keeps log_consumers.ready_at equal to the createdAt of the oldest waiting message; stamps committed_at when committed moves.';

CREATE OR REPLACE TRIGGER log_consumers_ready_on_insert
    BEFORE INSERT ON queen.log_consumers
    FOR EACH ROW EXECUTE FUNCTION queen.cursor_ready_trigger();
CREATE OR REPLACE TRIGGER log_consumers_ready_on_commit
    BEFORE UPDATE OF committed ON queen.log_consumers
    FOR EACH ROW WHEN (OLD.committed IS DISTINCT FROM NEW.committed)
    EXECUTE FUNCTION queen.cursor_ready_trigger();

-- queen.mark_ready(partitions, created_ats): after a push stored messages in these
-- partitions, every cursor of each gets ready_at where it had none. Every cursor row of
-- those partitions is locked (see above why), in (partition, group) order; only those
-- without a ready_at, as read under the lock, are written.
CREATE OR REPLACE FUNCTION queen.mark_ready(p_partition_ids bigint[], p_created_ats timestamptz[])
RETURNS void
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
-- A bitmap scan of a cursor's key visits every version of it before sorting them, and under a
-- held snapshot none can be pruned (docs/architecture.md, "Held snapshots"); an ordered scan
-- of the key index stops at the newest.
SET enable_bitmapscan = off
AS $$
DECLARE
    v_tids tid[];
    v_ats  timestamptz[];
BEGIN
    -- The cursors of those partitions from their keys (insert-only), each locked at its newest
    -- version (51_cursor_versions.sql). FOR UPDATE yields each row as the last transaction that
    -- held it left it, possibly newer than this statement's snapshot: the update is a
    -- statement of its own, whose snapshot sees what the locks waited for.
    SELECT array_agg(c.tid) FILTER (WHERE c.ready_at IS NULL), array_agg(k.at) FILTER (WHERE c.ready_at IS NULL)
      INTO v_tids, v_ats
      FROM (SELECT ck.partition_id, ck.consumer_group, m.at
              FROM queen.log_cursor_keys ck
              JOIN (SELECT u.pid, min(u.at) AS at FROM unnest(p_partition_ids, p_created_ats) AS u(pid, at)
                     GROUP BY u.pid) m ON m.pid = ck.partition_id
             ORDER BY ck.partition_id, ck.consumer_group) k
     CROSS JOIN LATERAL (
        SELECT lc.ctid AS tid, lc.ready_at FROM queen.log_consumers lc
         WHERE lc.partition_id = k.partition_id AND lc.consumer_group = k.consumer_group
         ORDER BY lc.version DESC LIMIT 1
           FOR UPDATE) c;
    IF v_tids IS NOT NULL THEN
        UPDATE queen.log_consumers lc SET ready_at = u.at
          FROM unnest(v_tids, v_ats) AS u(tid, at)
         WHERE lc.ctid = u.tid;
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.mark_ready(bigint[], timestamptz[]) IS
  'Gives every cursor of partitions that just got messages a ready_at where it had none.';
