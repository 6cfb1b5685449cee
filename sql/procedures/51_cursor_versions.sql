-- Cursor versions: a cursor row (log_consumers) is rewritten by every pop and acknowledgement.
-- While a snapshot is held anywhere on the cluster (a pg_dump, an idle REPEATABLE READ session,
-- a standby with hot_standby_feedback) none of its old versions can be pruned, and a lookup by
-- key that meets them oldest first gets slower with every message (docs/architecture.md,
-- "Held snapshots"). So:
--   * every update bumps the row's version (trigger below), and the key index is
--     (partition_id, consumer_group, version DESC): a key lookup meets the newest version
--     first, and a lookup that stops at the first visible row (LIMIT 1, EXISTS, SELECT INTO)
--     never visits an old one. An UPDATE or FOR UPDATE by key does not stop: the hot paths
--     lock the newest version with queen.lock_cursors (or LIMIT 1 ... FOR UPDATE) and then
--     address it by ctid, which a row lock held by this transaction keeps stable until it
--     updates the row itself; queen.cursor_tid finds it again after that.
--   * one cursor per (partition, group) is kept by log_cursor_keys, insert-only: a new cursor
--     row whose key exists is skipped (as ON CONFLICT DO NOTHING would), and deleting cursors
--     deletes their keys.

CREATE OR REPLACE FUNCTION queen.cursor_version_trigger()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    NEW.version := OLD.version + 1;
    RETURN NEW;
END;
$$;
COMMENT ON FUNCTION queen.cursor_version_trigger() IS
  'Bumps a cursor row''s version on every update, so each version has its own key-index entry.';

CREATE OR REPLACE TRIGGER log_consumers_version
    BEFORE UPDATE ON queen.log_consumers
    FOR EACH ROW EXECUTE FUNCTION queen.cursor_version_trigger();

-- Named to fire before log_consumers_ready_on_insert (triggers fire in name order): a skipped
-- row needs no ready_at.
CREATE OR REPLACE FUNCTION queen.cursor_key_trigger()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    INSERT INTO queen.log_cursor_keys (partition_id, consumer_group)
    VALUES (NEW.partition_id, NEW.consumer_group)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN NULL;  -- the cursor exists: skip the row
    END IF;
    NEW.version := 0;
    RETURN NEW;
END;
$$;
COMMENT ON FUNCTION queen.cursor_key_trigger() IS
  'Keeps one cursor per (partition, group): a new cursor row whose key exists is skipped.';

CREATE OR REPLACE TRIGGER log_consumers_key_on_insert
    BEFORE INSERT ON queen.log_consumers
    FOR EACH ROW EXECUTE FUNCTION queen.cursor_key_trigger();

CREATE OR REPLACE FUNCTION queen.cursor_key_delete_trigger()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    DELETE FROM queen.log_cursor_keys k USING gone g
     WHERE k.partition_id = g.partition_id AND k.consumer_group = g.consumer_group;
    RETURN NULL;
END;
$$;
COMMENT ON FUNCTION queen.cursor_key_delete_trigger() IS
  'Deletes the keys of deleted cursors.';

CREATE OR REPLACE TRIGGER log_consumers_key_on_delete
    AFTER DELETE ON queen.log_consumers
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION queen.cursor_key_delete_trigger();

-- queen.cursor_tid(partition, group): the ctid of the cursor's newest version (NULL: none).
-- Used to address a cursor this transaction holds locked.
CREATE OR REPLACE FUNCTION queen.cursor_tid(p_partition_id bigint, p_group text)
RETURNS tid
LANGUAGE sql STABLE
AS $$
    SELECT lc.ctid FROM queen.log_consumers lc
     WHERE lc.partition_id = p_partition_id AND lc.consumer_group = p_group
     ORDER BY lc.version DESC LIMIT 1
$$;
COMMENT ON FUNCTION queen.cursor_tid(bigint, text) IS
  'ctid of a cursor''s newest version, read newest first.';

-- queen.partition_cursors(partition ids): every cursor of those partitions as this snapshot sees
-- it, each read from its key (log_cursor_keys) newest version first, so the old versions a held
-- snapshot keeps are not visited, as a join on partition_id alone would visit them. Callers run
-- with enable_bitmapscan = off: a bitmap scan of a key visits all of its versions.
CREATE OR REPLACE FUNCTION queen.partition_cursors(p_partition_ids bigint[])
RETURNS SETOF queen.log_consumers
LANGUAGE sql STABLE
AS $$
    SELECT c.*
      FROM unnest(p_partition_ids) AS u(id)
      JOIN queen.log_cursor_keys k ON k.partition_id = u.id
     CROSS JOIN LATERAL (
        SELECT lc.* FROM queen.log_consumers lc
         WHERE lc.partition_id = k.partition_id AND lc.consumer_group = k.consumer_group
         ORDER BY lc.version DESC LIMIT 1) c
$$;
COMMENT ON FUNCTION queen.partition_cursors(bigint[]) IS
  'The cursors of partitions, each read newest version first from its key.';

-- queen.lock_cursors(group, partitions): locks the group's cursor on each partition FOR UPDATE,
-- in partition order (the lock order of every locker of several cursors), reading each newest
-- first; their ctids. A missing cursor has none.
CREATE OR REPLACE FUNCTION queen.lock_cursors(p_group text, p_partition_ids bigint[])
RETURNS tid[]
-- plpgsql, not sql: a sql function with a SET clause is never inlined and would be planned
-- again on every acknowledgement; plpgsql keeps the plan for the session.
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
-- A bitmap scan of a key visits all of its versions before sorting them: newest first needs
-- the ordered scan of the key index.
SET enable_bitmapscan = off
-- Generic plans only: their statements take arrays and ids as parameters, for which the
-- planner prefers a custom plan, planned again on every call (most of a call's CPU); the
-- settings above leave one generic plan, key lookups (docs/architecture.md, "Plans that stay right").
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    RETURN (SELECT coalesce(array_agg(c.tid), '{}')
              FROM (SELECT DISTINCT u.pid FROM unnest(p_partition_ids) AS u(pid) ORDER BY u.pid) k
             CROSS JOIN LATERAL (
                SELECT lc.ctid AS tid FROM queen.log_consumers lc
                 WHERE lc.partition_id = k.pid AND lc.consumer_group = p_group
                 ORDER BY lc.version DESC LIMIT 1
                   FOR UPDATE) c);
END;
$$;
COMMENT ON FUNCTION queen.lock_cursors(text, bigint[]) IS
  'Locks a group''s cursors on partitions in partition order, newest version first; their ctids.';

-- queen.cursor_consumed(last_claimed_at, committed_at): whether a group has consumed from the cursor's partition:
-- a pop handed out messages of it (last_claimed_at) or its committed offset moved (an ack, an
-- autoAck pop, a seek: committed_at). A group gets a cursor on every partition of its queue
-- when it registers, so having a cursor says nothing about its consumers; this is what
-- `members` counts (docs/consumer-groups.md).
CREATE OR REPLACE FUNCTION queen.cursor_consumed(p_last_claimed_at timestamptz, p_committed_at timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT p_last_claimed_at IS NOT NULL OR p_committed_at IS NOT NULL $$;
COMMENT ON FUNCTION queen.cursor_consumed(timestamptz, timestamptz) IS
  'Whether a cursor has handed out or committed anything (its last_claimed_at and committed_at).';
