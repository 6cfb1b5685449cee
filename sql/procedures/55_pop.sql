-- queen.pop: claims leased spans for a consumer group and returns their segments.
-- Inputs: queue name; partition name (NULL = any partition of the queue); group
--   ('__QUEUE_MODE__' for queue mode); batch (total messages, >= 1); max partitions
--   (>= 1); auto_ack; subscription start for a group's first pop (p_subscribe_all = true
--   means from the beginning, else p_subscription_at, NULL meaning now).
-- Output: one row per segment overlapping a claimed span, in claim order then offset
--   order, each with its partition, the pop's lease id (NULL with auto_ack), the span
--   (span_start, span_end] — the caller trims the segments to it — and skip_offsets, the
--   tombstoned offsets inside the span, which the caller does not deliver (NULL: none). No
--   row: nothing to hand out.
--   When the claim took over expired leases, dead-lettered or handed out offsets again, a
--   last row (partition_id NULL, no segment) counts that for the metrics (docs/metrics.md):
--   leases_expired (leases taken over), redelivered (offsets at or below a cursor's
--   delivered_to), lease_dead_letters (reason lease_expired) and expired_dead_letters
--   (reason expired). Segment rows carry NULL there.
-- Claim: a partition is claimable when it has messages past the group's cursor, no live
--   lease, no pending retryDelay, its window buffer has passed and its head is past its
--   delay. Among claimable partitions the one whose oldest waiting message is oldest goes
--   first: the cursors' ready_at (52_cursor_ready.sql) is that createdAt, and the index
--   log_consumers_ready yields them in that order, from the group's claim floor
--   (53_claim_floor.sql) on, so a pop reads the few cursors ahead of the one it takes, not
--   every partition of the queue nor the entries that older versions of cursors left behind.
--   Cursor rows are locked FOR UPDATE SKIP LOCKED, so concurrent pops never wait on each other
--   and never get the same span. Partition rows are not locked (pushers own them). A round
--   claims cursors until their waiting messages cover the batch.
-- Two paths, one contract: a queue-wide pop is queen.pop_fused with one request
--   (56_pop_fused.sql), whose spans, leases and segment reads are set-based statements over
--   all the cursors it claims, so a pop over many small partitions costs a fixed number of
--   statements. queen.pop_stepwise, below, applies every rule cursor by cursor: pops of one
--   named partition, and the pops whose cursors need it (a lease taken over, tombstones,
--   maxWaitTimeSeconds, delayedProcessing), which queen.pop_fused hands to it.
-- Attempts: claiming a span whose lease expired unreleased counts one attempt for its
--   head; a head that exhausts retryLimit this way is dead-lettered (reason lease_expired).
-- maxWaitTimeSeconds: messages older than that when their partition is claimed are
--   dead-lettered for the group (reason expired) instead of delivered.
-- Tombstones (44_tombstones.sql): a span never starts on a tombstoned offset; the cursor moves
--   over them first. A partition whose backlog held only tombstones hands out nothing, so
--   the claim runs again for the partitions it did not fill (a bounded number of rounds):
--   a pop never answers empty because of tombstones while live messages are claimable.
--   Without tombstones this costs one empty index probe per claimed partition.

-- The counts row is new in the output: drop an older form where it is still installed.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_proc
                WHERE oid = to_regprocedure('queen.pop(text, text, text, integer, integer, boolean, boolean, timestamptz)')
                  AND NOT ('expired_dead_letters' = ANY (proargnames))) THEN
        DROP FUNCTION queen.pop(text, text, text, integer, integer, boolean, boolean, timestamptz);
    END IF;
END
$$;

-- queen.pop_stepwise: queen.pop's contract, every rule applied cursor by cursor.
CREATE OR REPLACE FUNCTION queen.pop_stepwise(
    p_queue text, p_partition text, p_group text, p_batch integer, p_max_partitions integer,
    p_auto_ack boolean, p_subscribe_all boolean, p_subscription_at timestamptz)
RETURNS TABLE(partition_id bigint, partition_name text, lease_id uuid, span_start bigint,
              span_end bigint, seg_first bigint, seg_codec smallint, seg_body bytea, skip_offsets bigint[],
              leases_expired integer, redelivered bigint, lease_dead_letters integer, expired_dead_letters bigint)
LANGUAGE plpgsql
-- Key lookups only: a plan cached while a table was small must not scan it whole once it
-- has grown (docs/architecture.md, "Plans that stay right"). The claim must walk
-- log_consumers_ready in its order and stop at the first claimable cursors: a generic plan
-- that gathers the group's cursors and sorts them costs as much as the group has cursors.
SET enable_seqscan = off
SET jit = off
SET enable_sort = off
SET enable_bitmapscan = off
-- Generic plans only: their statements take arrays and ids as parameters, for which the
-- planner prefers a custom plan, planned again on every call (most of a call's CPU); the
-- settings above leave one generic plan, key lookups (docs/architecture.md, "Plans that stay right").
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    q           record;
    c           record;
    v_lease     uuid := CASE WHEN p_auto_ack THEN NULL
                         ELSE queen.new_lease_id(CASE WHEN p_partition IS NULL THEN p_max_partitions ELSE 1 END) END;
    v_left      bigint := p_batch;
    v_committed bigint;
    v_attempts  integer;
    v_attempt_at bigint;
    v_end       bigint;
    v_ready_end bigint;
    v_expired_end bigint;
    v_floor     timestamptz;
    v_only      bigint;  -- the one partition asked for, if any
    v_span_top  bigint;  -- last_offset of the segment holding the span's end
    v_tomb      boolean; -- the partition has tombstones past the cursor
    v_skip      bigint[];
    v_slots     integer := p_max_partitions;  -- partitions still to claim
    v_emptied   boolean; -- a claimed partition held only tombstones: claim again
    v_rounds    integer := 0;
    v_dead      integer;
    -- The counts row (see the header).
    v_takeovers   integer := 0;
    v_again       bigint := 0;
    v_lease_dead  integer := 0;
    v_expired_dead bigint := 0;
    -- The cursors claimed in a round, in claim order (parallel arrays), and the one at hand.
    a_pid       bigint[];
    a_committed bigint[];
    a_lease     uuid[];
    a_counted   boolean[];
    a_attempts  integer[];
    a_attempt_at bigint[];
    a_delivered bigint[];
    a_last      bigint[];
    a_tid       tid[];
    a_name      text[];
    v_claim     refcursor;
    v_cover     bigint;   -- messages waiting on the cursors claimed so far in the round
    v_cut       boolean;  -- the round stopped claiming on that count
    c_pid       bigint;
    c_committed bigint;
    c_lease     uuid;
    c_counted   boolean;
    c_attempts  integer;
    c_attempt_at bigint;
    c_delivered bigint;
    c_last      bigint;
    c_tid       tid;
    c_name      text;
BEGIN
    IF p_batch < 1 OR p_max_partitions < 1 THEN
        PERFORM queen.refuse_pop_sizes();
    END IF;
    PERFORM queen.register_group(p_queue, p_group,
        CASE WHEN p_subscribe_all THEN NULL ELSE coalesce(p_subscription_at, now()) END);

    SELECT qu.id, qu.lease_time, qu.retry_limit, qu.delayed_processing, qu.window_buffer,
           qu.max_wait_time_seconds INTO q
      FROM queen.queues qu WHERE qu.name = p_queue;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF p_partition IS NOT NULL THEN
        SELECT pt.id INTO v_only FROM queen.log_partitions pt WHERE pt.queue_id = q.id AND pt.name = p_partition;
        IF NOT FOUND THEN
            RETURN;
        END IF;
    END IF;
    v_floor := queen.claim_floor(q.id, p_group);

    <<claim>>
    LOOP
    v_emptied := false;
    v_rounds := v_rounds + 1;
    -- The claim: claimable cursors in claim order, locked, until their waiting messages cover
    -- what is left of the batch. The cursor is fetched one row at a time (a FOR loop would
    -- fetch, and lock, ten), so a pop does not hold cursors it will not use. last - committed
    -- counts messages that retention may have removed since: a round cut short on that
    -- count runs another (v_cut).
    a_pid := '{}'; a_committed := '{}'; a_lease := '{}'; a_counted := '{}'; a_attempts := '{}';
    a_attempt_at := '{}'; a_delivered := '{}'; a_last := '{}'; a_tid := '{}'; a_name := '{}';
    v_cover := 0;
    v_cut := false;
    IF v_only IS NULL THEN
        OPEN v_claim NO SCROLL FOR
            SELECT lc.partition_id, lc.committed, lc.lease_id, lc.lease_counted, lc.attempts,
                   lc.attempts_offset, lc.delivered_to, h.last_offset, lc.ctid AS tid,
                   (SELECT pt.name FROM queen.log_partitions pt WHERE pt.id = lc.partition_id) AS name
              FROM queen.log_consumers lc
             CROSS JOIN LATERAL queen.partition_head(lc.partition_id) h
             WHERE lc.queue_id = q.id
               AND lc.consumer_group = p_group
               AND lc.ready_at IS NOT NULL
               AND lc.ready_at >= v_floor
               AND h.last_offset > lc.committed
               AND (lc.lease_id IS NULL OR lc.lease_expires_at <= now())
               AND (lc.retry_at IS NULL OR lc.retry_at <= now())
               AND (q.window_buffer = 0 OR h.last_created_at <= now() - make_interval(secs => q.window_buffer))
             ORDER BY lc.ready_at, lc.partition_id
             LIMIT v_slots
               FOR UPDATE OF lc SKIP LOCKED;
    ELSE
        -- One partition: its cursor's newest version, found by key (51_cursor_versions.sql),
        -- under the same tests; not a walk of the group's claim index up to it.
        OPEN v_claim NO SCROLL FOR
            SELECT lc.partition_id, lc.committed, lc.lease_id, lc.lease_counted, lc.attempts,
                   lc.attempts_offset, lc.delivered_to, h.last_offset, lc.ctid AS tid,
                   (SELECT pt.name FROM queen.log_partitions pt WHERE pt.id = lc.partition_id) AS name
              FROM queen.log_consumers lc
             CROSS JOIN LATERAL queen.partition_head(lc.partition_id) h
             WHERE lc.ctid = queen.cursor_tid(v_only, p_group)
               AND lc.queue_id = q.id
               AND lc.consumer_group = p_group
               AND lc.ready_at IS NOT NULL
               AND lc.ready_at >= v_floor
               AND h.last_offset > lc.committed
               AND (lc.lease_id IS NULL OR lc.lease_expires_at <= now())
               AND (lc.retry_at IS NULL OR lc.retry_at <= now())
               AND (q.window_buffer = 0 OR h.last_created_at <= now() - make_interval(secs => q.window_buffer))
               FOR UPDATE OF lc SKIP LOCKED;
    END IF;
    LOOP
        FETCH v_claim INTO c;
        EXIT WHEN NOT FOUND;
        a_pid := a_pid || c.partition_id;
        a_committed := a_committed || c.committed;
        a_lease := a_lease || c.lease_id;
        a_counted := a_counted || c.lease_counted;
        a_attempts := a_attempts || c.attempts;
        a_attempt_at := a_attempt_at || c.attempts_offset;
        a_delivered := a_delivered || c.delivered_to;
        a_last := a_last || c.last_offset;
        a_tid := a_tid || c.tid;
        a_name := a_name || c.name;
        v_cover := v_cover + (c.last_offset - c.committed);
        IF v_cover >= v_left THEN
            v_cut := cardinality(a_pid) < v_slots;
            EXIT;
        END IF;
    END LOOP;
    CLOSE v_claim;

    <<slow>>
    FOR i IN 1 .. cardinality(a_pid) LOOP
        EXIT WHEN v_left <= 0;
        c_pid := a_pid[i]; c_committed := a_committed[i]; c_lease := a_lease[i]; c_counted := a_counted[i];
        c_attempts := a_attempts[i]; c_attempt_at := a_attempt_at[i]; c_delivered := a_delivered[i];
        c_last := a_last[i]; c_tid := a_tid[i]; c_name := a_name[i];
        v_committed := c_committed;
        v_attempts := c_attempts;
        v_attempt_at := c_attempt_at;
        IF c_lease IS NOT NULL THEN
            v_takeovers := v_takeovers + 1;  -- the claim's filter admits only expired leases
        END IF;

        v_tomb := EXISTS (SELECT 1 FROM queen.message_tombstones t
                           WHERE t.partition_id = c_pid AND t.msg_offset > v_committed);
        IF v_tomb THEN
            v_committed := queen.past_tombstones(c_pid, v_committed, c_last);
        END IF;

        -- The previous lease expired unreleased: one attempt for its head, unless its head has
        -- been deleted since (the cursor just moved over it): the message after it may never
        -- have been delivered.
        IF c_lease IS NOT NULL AND NOT c_counted AND v_committed = c_committed THEN
            v_attempts := CASE WHEN v_attempt_at = v_committed + 1 THEN v_attempts + 1 ELSE 1 END;
            v_attempt_at := v_committed + 1;
            IF v_attempts > q.retry_limit THEN
                PERFORM queen.dead_letter(q.id, c_pid, v_committed + 1, p_group,
                                          'lease expired', v_attempts, 'lease_expired');
                v_lease_dead := v_lease_dead + 1;
                v_committed := v_committed + 1;
                v_attempts := 0;
                v_attempt_at := 0;
                IF v_tomb THEN
                    v_committed := queen.past_tombstones(c_pid, v_committed, c_last);
                END IF;
            END IF;
        END IF;

        -- Retention may have removed segments past the cursor: skip to the oldest one left.
        SELECT s.first_offset - 1 INTO v_ready_end FROM queen.log_segments s
         WHERE s.partition_id = c_pid AND s.last_offset > v_committed
         ORDER BY s.last_offset LIMIT 1;
        v_committed := greatest(v_committed, coalesce(v_ready_end, c_last));

        IF q.max_wait_time_seconds > 0 THEN
            -- Messages still unconsumed after maxWaitTimeSeconds go to the dead letters
            -- (reason 'expired'); createdAt is monotone, so they are a prefix of the backlog.
            SELECT s.last_offset INTO v_expired_end FROM queen.log_segments s
             WHERE s.partition_id = c_pid
               AND s.last_offset > v_committed
               AND s.created_at <= now() - make_interval(secs => q.max_wait_time_seconds)
             ORDER BY s.last_offset DESC LIMIT 1;
            IF v_expired_end IS NOT NULL THEN
                v_dead := queen.dead_letter_range(q.id, c_pid, v_committed + 1, v_expired_end, p_group,
                    'not consumed within maxWaitTimeSeconds', 0, 'expired');
                v_expired_dead := v_expired_dead + v_dead;
                v_committed := v_expired_end;
                v_attempts := 0;
                v_attempt_at := 0;
                IF v_tomb THEN
                    v_committed := queen.past_tombstones(c_pid, v_committed, c_last);
                END IF;
            END IF;
        END IF;

        v_end := least(c_last, v_committed + v_left);
        IF q.delayed_processing > 0 THEN
            SELECT s.last_offset INTO v_ready_end FROM queen.log_segments s
             WHERE s.partition_id = c_pid
               AND s.created_at <= now() - make_interval(secs => q.delayed_processing)
             ORDER BY s.last_offset DESC LIMIT 1;
            v_end := least(v_end, coalesce(v_ready_end, 0));
        END IF;

        IF v_attempt_at <= v_committed THEN
            v_attempts := 0;  -- the cursor passed the head they counted for
            v_attempt_at := 0;
        END IF;

        IF v_end <= v_committed THEN
            v_emptied := v_emptied OR (v_tomb AND v_committed >= c_last);
            UPDATE queen.log_consumers lc
               SET committed = v_committed, attempts = v_attempts, attempts_offset = v_attempt_at,
                   lease_id = NULL, lease_end = NULL, lease_expires_at = NULL, lease_counted = false
             WHERE lc.ctid = c_tid;  -- the version locked above (51_cursor_versions.sql)
            CONTINUE slow;
        END IF;

        IF p_auto_ack THEN
            UPDATE queen.log_consumers lc
               SET committed = v_end,
                   attempts = CASE WHEN v_attempt_at <= v_end THEN 0 ELSE v_attempts END,
                   attempts_offset = CASE WHEN v_attempt_at <= v_end THEN 0 ELSE v_attempt_at END,
                   lease_id = NULL, lease_end = NULL, lease_expires_at = NULL, lease_counted = false,
                   retry_at = NULL, last_claimed_at = now(), delivered_to = greatest(c_delivered, v_end)
             WHERE lc.ctid = c_tid;  -- the version locked above (51_cursor_versions.sql)
        ELSE
            UPDATE queen.log_consumers lc
               SET committed = v_committed, attempts = v_attempts, attempts_offset = v_attempt_at,
                   lease_id = v_lease, lease_start = v_committed, lease_end = v_end,
                   lease_expires_at = now() + make_interval(secs => q.lease_time),
                   lease_counted = false, retry_at = NULL, last_claimed_at = now(),
                   delivered_to = greatest(c_delivered, v_end)
             WHERE lc.ctid = c_tid;  -- the version locked above (51_cursor_versions.sql)
        END IF;
        v_left := v_left - (v_end - v_committed);
        v_slots := v_slots - 1;
        v_skip := CASE WHEN v_tomb THEN queen.tombstones_in(c_pid, v_committed, v_end) END;
        IF c_delivered > v_committed THEN
            -- Offsets handed out before (a lease that expired, a retry, a released lease),
            -- less the tombstoned ones, which this pop does not deliver.
            v_again := v_again + least(v_end, c_delivered) - v_committed
                       - coalesce((SELECT count(*) FROM unnest(v_skip) x WHERE x <= c_delivered), 0);
        END IF;

        -- The segment holding v_end bounds the scan: the index is on last_offset, and without
        -- an upper bound it would read every segment of the backlog past the span.
        SELECT s.last_offset INTO v_span_top FROM queen.log_segments s
         WHERE s.partition_id = c_pid AND s.last_offset >= v_end
         ORDER BY s.last_offset LIMIT 1;
        RETURN QUERY
            SELECT c_pid, c_name, v_lease, v_committed, v_end, s.first_offset, s.codec, s.body, v_skip,
                   NULL::integer, NULL::bigint, NULL::integer, NULL::bigint
              FROM queen.log_segments s
             WHERE s.partition_id = c_pid
               AND s.last_offset > v_committed
               AND s.last_offset <= coalesce(v_span_top, v_end)
               AND s.first_offset <= v_end
             ORDER BY s.last_offset;
    END LOOP slow;
    EXIT claim WHEN (NOT v_emptied AND NOT v_cut) OR v_left <= 0 OR v_slots <= 0 OR v_rounds >= 8;
    END LOOP claim;

    IF v_takeovers > 0 OR v_again > 0 OR v_lease_dead > 0 OR v_expired_dead > 0 THEN
        leases_expired := v_takeovers;
        redelivered := v_again;
        lease_dead_letters := v_lease_dead;
        expired_dead_letters := v_expired_dead;
        RETURN NEXT;  -- every other output column is NULL: the counts row
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.pop_stepwise(text, text, text, integer, integer, boolean, boolean, timestamptz) IS
  'queen.pop, cursor by cursor: named partitions, and claims that need a rule applied per cursor.';

-- queen.refuse_pop_sizes(): the refusal (22023) of a pop asking for fewer than one message or
-- one partition, raised by queen.pop and queen.pop_fused (56_pop_fused.sql); ext/pop_fused.c
-- states it too, held to this by regress/sql/ext_pop_fused.sql.
CREATE OR REPLACE FUNCTION queen.refuse_pop_sizes()
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    RAISE EXCEPTION 'pop: batch and partitions must be at least 1' USING ERRCODE = '22023';
END;
$$;
COMMENT ON FUNCTION queen.refuse_pop_sizes() IS
  'Raises the refusal (22023) of a pop asking for fewer than one message or one partition.';

CREATE OR REPLACE FUNCTION queen.pop(
    p_queue text, p_partition text, p_group text, p_batch integer, p_max_partitions integer,
    p_auto_ack boolean, p_subscribe_all boolean, p_subscription_at timestamptz)
RETURNS TABLE(partition_id bigint, partition_name text, lease_id uuid, span_start bigint,
              span_end bigint, seg_first bigint, seg_codec smallint, seg_body bytea, skip_offsets bigint[],
              leases_expired integer, redelivered bigint, lease_dead_letters integer, expired_dead_letters bigint)
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_partition IS NULL AND p_queue IS NOT NULL AND p_group IS NOT NULL
       AND to_regproc('queen_ext.pop_fused') IS NOT NULL THEN
        -- queen_ext 1.4: queen.pop_fused's C path directly (ext/pop_fused.c).
        RETURN QUERY
            SELECT f.partition_id, f.partition_name, f.lease_id, f.span_start, f.span_end, f.seg_first,
                   f.seg_codec, f.seg_body, f.skip_offsets, f.leases_expired, f.redelivered,
                   f.lease_dead_letters, f.expired_dead_letters
              FROM queen_ext.pop_fused(p_queue, p_group, ARRAY[p_batch], ARRAY[p_max_partitions], p_auto_ack,
                                       p_subscribe_all, p_subscription_at) f;
    ELSIF p_partition IS NOT NULL THEN
        RETURN QUERY SELECT * FROM queen.pop_stepwise(p_queue, p_partition, p_group, p_batch, p_max_partitions,
                                                      p_auto_ack, p_subscribe_all, p_subscription_at);
    ELSE
        RETURN QUERY
            SELECT f.partition_id, f.partition_name, f.lease_id, f.span_start, f.span_end, f.seg_first,
                   f.seg_codec, f.seg_body, f.skip_offsets, f.leases_expired, f.redelivered,
                   f.lease_dead_letters, f.expired_dead_letters
              FROM queen.pop_fused(p_queue, p_group, ARRAY[p_batch], ARRAY[p_max_partitions], p_auto_ack,
                                   p_subscribe_all, p_subscription_at) f;
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.pop(text, text, text, integer, integer, boolean, boolean, timestamptz) IS
  'Claims leased spans for a group (SKIP LOCKED) and returns the segments that cover them.';

-- queen.release_lease: gives up a lease without counting an attempt (a pop whose response
-- could not be written). Returns the number of cursors released.
CREATE OR REPLACE FUNCTION queen.release_lease(p_lease_id uuid, p_group text)
RETURNS integer
LANGUAGE sql
AS $$
    WITH released AS (
        UPDATE queen.log_consumers lc
           SET lease_id = NULL, lease_end = NULL, lease_expires_at = NULL, lease_counted = false
         WHERE lc.lease_id = p_lease_id AND lc.consumer_group = p_group
        RETURNING 1)
    SELECT count(*)::integer FROM released
$$;
COMMENT ON FUNCTION queen.release_lease(uuid, text) IS
  'Releases every cursor lease with this id for the group, without counting an attempt.';

-- queen.release_lease_part(shards, lease id, group): queen.release_lease on this database, as
-- one row; p_shards only routes the proxy's call.
CREATE OR REPLACE FUNCTION queen.release_lease_part(p_shards integer[], p_lease_id uuid, p_group text)
RETURNS TABLE(released integer)
LANGUAGE sql
AS $$ SELECT queen.release_lease(p_lease_id, p_group) $$;
COMMENT ON FUNCTION queen.release_lease_part(integer[], uuid, text) IS
  'queen.release_lease on this shard (the proxy''s call routed by the shards a lease id names).';
