-- queen.ack: applies the acknowledgements of one call (docs/http-api.md, the ack algorithm).
-- Inputs: the group; parallel arrays, one element per ack: partition id, transaction id,
--   offset (NULL: resolve by transaction id), lease id (NULL: the live lease), status
--   ('completed' | 'failed' | 'retry' | 'dlq'), error text.
-- Output: one row per ack (item = 1-based position): success, the resolved offset,
--   noop, dlq, lease_released (state of that partition's lease after the call), error
--   (NULL exactly when success), and the queue name (so the broker can wake pops).
-- A stop (retry, or failed with budget left) at offset c, like a dead letter at c, means
--   the consumer is done with everything below c: redelivery restarts at c.
-- Resolution acts only inside the group's live span (committed, lease_end]; an ack of a
--   message at or below the cursor is a noop (completed) or 'already committed' (nack);
--   anything else that does not resolve is 'unresolvable' and changes nothing.
-- Tombstones (44_tombstones.sql): a nack of a message tombstoned after it was handed out
--   counts as completed; a commit that reaches the offset before a tombstone moves over the
--   tombstones that follow it, up to the span end.
-- Lock order: cursor rows are locked FOR UPDATE in partition id order.

CREATE OR REPLACE FUNCTION queen.ack(
    p_group text, p_partition_ids bigint[], p_txids text[], p_offsets bigint[],
    p_lease_ids uuid[], p_statuses text[], p_errors text[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
LANGUAGE plpgsql
-- Key lookups only: a plan cached while a table was small must not scan it whole once it
-- has grown (docs/architecture.md, "Plans that stay right").
SET enable_seqscan = off
SET jit = off
-- Generic plans only: their statements take arrays and ids as parameters, for which the
-- planner prefers a custom plan, planned again on every call (most of a call's CPU); the
-- settings above leave one generic plan, key lookups (docs/architecture.md, "Plans that stay right").
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_n        integer := cardinality(p_partition_ids);
    v_pid      bigint;
    cur        record;
    v_queue    text;
    v_live     boolean;
    v_off      bigint;
    v_st       integer;
    -- per-item outcome
    o_off      bigint[];
    o_state    text[];     -- 'signal', 'noop', 'committed', 'unresolvable', 'unknown'
    o_dlq      boolean[];
    o_applied  boolean[];
    -- the walk
    v_committed bigint;
    v_c        bigint;
    v_hc       bigint;
    v_cst      integer;
    v_cerr     text;
    v_attempts integer;
    v_attempt_at bigint;
    v_counted  boolean;
    v_exhausted boolean;
    v_released boolean;
    v_retry_at timestamptz;
    v_stop_at  bigint;
    v_cidx     integer;    -- the ack whose signal counts at the stop
    i          integer;
BEGIN
    IF cardinality(p_txids) <> v_n OR cardinality(p_offsets) <> v_n OR cardinality(p_lease_ids) <> v_n
       OR cardinality(p_statuses) <> v_n OR cardinality(p_errors) <> v_n THEN
        RAISE EXCEPTION 'ack: arrays differ in length' USING ERRCODE = '22023';
    END IF;
    IF 'completed' = ALL (p_statuses) THEN
        -- Only completions: the set-based form (61_ack_completed.sql).
        RETURN QUERY SELECT * FROM queen.ack_completed(p_group, p_partition_ids, p_txids, p_offsets, p_lease_ids);
        RETURN;
    END IF;
    o_off := array_fill(NULL::bigint, ARRAY[v_n]);
    o_state := array_fill('unknown'::text, ARRAY[v_n]);
    o_dlq := array_fill(false, ARRAY[v_n]);
    o_applied := array_fill(false, ARRAY[v_n]);

    FOR v_pid IN SELECT DISTINCT x FROM unnest(p_partition_ids) AS x ORDER BY x LOOP
        -- The newest version first (51_cursor_versions.sql), locked; updated below by ctid.
        SELECT lc.*, lc.ctid AS tid, qu.retry_limit, qu.retry_delay, qu.name AS qname, qu.id AS qid INTO cur
          FROM queen.log_consumers lc
          JOIN queen.queues qu ON qu.id = lc.queue_id
         WHERE lc.partition_id = v_pid AND lc.consumer_group = p_group
         ORDER BY lc.version DESC LIMIT 1
           FOR UPDATE OF lc;
        IF NOT FOUND THEN
            FOR i IN 1..v_n LOOP
                IF p_partition_ids[i] = v_pid THEN o_state[i] := 'unresolvable'; END IF;
            END LOOP;
            CONTINUE;
        END IF;
        v_queue := cur.qname;
        v_live := cur.lease_id IS NOT NULL AND cur.lease_expires_at > now();

        -- Resolve each ack of this partition to an offset and classify it.
        FOR i IN 1..v_n LOOP
            CONTINUE WHEN p_partition_ids[i] <> v_pid;
            v_off := p_offsets[i];
            IF v_off IS NULL THEN
                SELECT d.msg_offset INTO v_off FROM queen.log_dedup d
                 WHERE d.partition_id = v_pid AND d.transaction_id = p_txids[i];
                IF v_off IS NOT NULL AND v_off > cur.committed
                   AND NOT (v_live AND v_off <= cur.lease_end) THEN
                    v_off := NULL;  -- a reused id outside the span: look inside the span
                END IF;
                IF v_off IS NULL AND v_live THEN
                    v_off := queen.find_in_span(v_pid, cur.committed, cur.lease_end, p_txids[i]);
                END IF;
            END IF;
            o_off[i] := v_off;
            IF v_off IS NOT NULL AND v_off <= cur.committed THEN
                o_state[i] := CASE WHEN p_statuses[i] = 'completed' THEN 'noop' ELSE 'committed' END;
            ELSIF v_off IS NOT NULL AND v_live AND v_off <= cur.lease_end
                  AND (p_lease_ids[i] IS NULL OR p_lease_ids[i] = cur.lease_id) THEN
                o_state[i] := 'signal';
            ELSE
                o_state[i] := 'unresolvable';
            END IF;
        END LOOP;

        -- A nack of a copy handed out before its message was deleted acts as completed: it is
        -- not redelivered, counts no attempt and is never dead-lettered.
        IF v_live AND EXISTS (SELECT 1 FROM queen.message_tombstones t
                               WHERE t.partition_id = v_pid AND t.msg_offset > cur.committed
                                 AND t.msg_offset <= cur.lease_end) THEN
            FOR i IN 1..v_n LOOP
                IF p_partition_ids[i] = v_pid AND o_state[i] = 'signal' AND p_statuses[i] <> 'completed'
                   AND EXISTS (SELECT 1 FROM queen.message_tombstones t
                                WHERE t.partition_id = v_pid AND t.msg_offset = o_off[i]) THEN
                    p_statuses[i] := 'completed';
                END IF;
            END LOOP;
        END IF;

        -- The walk over this partition's signals (docs/http-api.md, steps 1-4).
        v_committed := cur.committed;
        v_attempts := cur.attempts;
        v_attempt_at := cur.attempts_offset;
        v_counted := cur.lease_counted;
        v_exhausted := false;
        v_released := false;
        v_retry_at := NULL;
        v_stop_at := NULL;
        v_cidx := NULL;
        LOOP
            SELECT min(o_off[j]) INTO v_c FROM generate_subscripts(o_off, 1) j
             WHERE p_partition_ids[j] = v_pid AND o_state[j] = 'signal'
               AND o_off[j] > v_committed AND p_statuses[j] <> 'completed';
            SELECT max(o_off[j]) INTO v_hc FROM generate_subscripts(o_off, 1) j
             WHERE p_partition_ids[j] = v_pid AND o_state[j] = 'signal'
               AND o_off[j] > v_committed AND p_statuses[j] = 'completed'
               AND (v_c IS NULL OR o_off[j] < v_c);
            IF v_hc IS NOT NULL THEN
                v_committed := v_hc;
            END IF;
            EXIT WHEN v_c IS NULL;
            -- The strongest signal at c: dlq > failed > retry.
            SELECT CASE p_statuses[j] WHEN 'dlq' THEN 3 WHEN 'failed' THEN 2 ELSE 1 END, p_errors[j], j
              INTO v_cst, v_cerr, v_cidx
              FROM generate_subscripts(o_off, 1) j
             WHERE p_partition_ids[j] = v_pid AND o_state[j] = 'signal' AND o_off[j] = v_c
               AND p_statuses[j] <> 'completed'
             ORDER BY CASE p_statuses[j] WHEN 'dlq' THEN 3 WHEN 'failed' THEN 2 ELSE 1 END DESC, j
             LIMIT 1;
            IF v_cst = 2 THEN
                IF v_counted THEN
                    -- This lease already counted its one attempt.
                    NULL;
                ELSE
                    v_attempts := CASE WHEN v_attempt_at = v_c THEN v_attempts + 1 ELSE 1 END;
                    v_attempt_at := v_c;
                    v_counted := true;
                END IF;
                IF v_exhausted OR (v_attempt_at = v_c AND v_attempts > cur.retry_limit) THEN
                    v_exhausted := true;
                    v_cst := 3;
                END IF;
            END IF;
            IF v_cst = 3 THEN
                PERFORM queen.dead_letter(cur.qid, v_pid, v_c, p_group, v_cerr,
                    CASE WHEN v_attempt_at = v_c THEN v_attempts ELSE 0 END,
                    CASE WHEN v_exhausted THEN 'retries_exhausted' ELSE 'dlq' END);
                FOR i IN 1..v_n LOOP
                    IF p_partition_ids[i] = v_pid AND o_state[i] = 'signal' AND o_off[i] = v_c
                       AND p_statuses[i] <> 'completed' THEN
                        o_dlq[i] := true;
                    END IF;
                END LOOP;
                v_committed := v_c;
                CONTINUE;
            END IF;
            -- retry (1) or failed with budget left (2): stop here, release the lease;
            -- redelivery starts at c, so everything below c is done.
            v_stop_at := v_c;
            v_committed := v_c - 1;
            v_released := true;
            IF v_cst = 2 THEN
                v_retry_at := now() + make_interval(secs => cur.retry_delay / 1000.0);
            END IF;
            EXIT;
        END LOOP;

        IF v_live AND v_stop_at IS NULL AND v_committed > cur.committed AND v_committed < cur.lease_end THEN
            v_committed := queen.past_tombstones(v_pid, v_committed, cur.lease_end);
        END IF;
        IF v_attempt_at <= v_committed THEN
            v_attempts := 0;
            v_attempt_at := 0;
        END IF;
        IF v_live AND v_committed >= cur.lease_end THEN
            v_released := true;
        END IF;

        -- Which signals took effect: those at or below the new cursor, and the stop.
        FOR i IN 1..v_n LOOP
            IF p_partition_ids[i] = v_pid AND o_state[i] = 'signal' THEN
                o_applied[i] := (p_statuses[i] = 'completed' AND o_off[i] <= v_committed)
                             OR o_dlq[i]
                             OR (v_stop_at IS NOT NULL AND i = v_cidx);
            END IF;
        END LOOP;

        UPDATE queen.log_consumers lc
           SET committed = v_committed,
               attempts = v_attempts,
               attempts_offset = v_attempt_at,
               lease_counted = CASE WHEN v_released THEN false ELSE v_counted END,
               lease_id = CASE WHEN v_released THEN NULL ELSE lc.lease_id END,
               lease_end = CASE WHEN v_released THEN NULL ELSE lc.lease_end END,
               lease_expires_at = CASE WHEN v_released THEN NULL ELSE lc.lease_expires_at END,
               retry_at = v_retry_at
         WHERE lc.ctid = cur.tid;

        FOR i IN 1..v_n LOOP
            CONTINUE WHEN p_partition_ids[i] <> v_pid;
            item := i;
            msg_offset := o_off[i];
            dlq := o_dlq[i];
            noop := o_state[i] = 'noop';
            lease_released := v_released OR NOT v_live;
            queue_name := v_queue;
            IF o_state[i] = 'noop' OR o_applied[i] THEN
                success := true;
                error := NULL;
            ELSIF o_state[i] = 'committed' THEN
                success := false;
                error := 'already committed';
            ELSIF o_state[i] = 'unresolvable' THEN
                success := false;
                error := 'unresolvable';
            ELSE
                success := false;
                error := CASE WHEN o_off[i] = v_stop_at
                              THEN 'not applied: a stronger signal for the same message counts'
                              ELSE format('not applied: redelivery restarts at offset %s', v_stop_at) END;
            END IF;
            RETURN NEXT;
        END LOOP;
    END LOOP;

    -- Acks for partitions without a cursor row of this group.
    FOR i IN 1..v_n LOOP
        IF o_state[i] = 'unresolvable' AND NOT EXISTS (
               SELECT 1 FROM queen.log_consumers lc
                WHERE lc.partition_id = p_partition_ids[i] AND lc.consumer_group = p_group) THEN
            item := i; success := false; msg_offset := o_off[i]; noop := false; dlq := false;
            lease_released := true; error := 'unresolvable'; queue_name := NULL;
            RETURN NEXT;
        END IF;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION queen.ack(text, bigint[], text[], bigint[], uuid[], text[], text[]) IS
  'Applies one call''s acks per (partition, group): cumulative commit, nacks, dead letters.';

-- queen.find_in_span: offset of the message with this transaction id inside
-- (p_after, p_end] of a partition, decoding only the segments that overlap the span; NULL
-- when it is not there. When it is not found but the span has segments this database
-- cannot decode (zstd written with queen_ext, which was dropped since), the id may sit in
-- one of them: SQLSTATE QNDEC is raised, the caller's transaction is void, and the broker,
-- which decodes zstd itself, resolves the offset and calls again with it.
CREATE OR REPLACE FUNCTION queen.find_in_span(p_partition_id bigint, p_after bigint, p_end bigint, p_txid text)
RETURNS bigint
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_off bigint;
BEGIN
    SELECT s.first_offset + f.idx INTO v_off
      FROM queen.log_segments s
     CROSS JOIN LATERAL queen.decode_segment(s.body) f
     WHERE s.partition_id = p_partition_id
       AND s.last_offset > p_after
       AND s.first_offset <= p_end
       AND f.transaction_id = p_txid
       AND s.first_offset + f.idx > p_after
       AND s.first_offset + f.idx <= p_end
     ORDER BY 1
     LIMIT 1;
    IF v_off IS NULL AND queen.codec_extension() IS NULL AND EXISTS (
           SELECT 1 FROM queen.log_segments s
            WHERE s.partition_id = p_partition_id AND s.last_offset > p_after
              AND s.first_offset <= p_end AND s.codec <> 0) THEN
        RAISE EXCEPTION 'ack: transaction id % may sit in a zstd segment of partition % that this database cannot decode without queen_ext',
            p_txid, p_partition_id
            USING ERRCODE = 'QNDEC',
                  HINT = 'Give the offset (the broker does so itself when it gets this error).';
    END IF;
    RETURN v_off;
END;
$$;
COMMENT ON FUNCTION queen.find_in_span(bigint, bigint, bigint, text) IS
  'Offset of a transaction id inside a span of a partition, or NULL; raises QNDEC when it may sit in a segment this database cannot decode.';

-- queen.ack_part: queen.ack over this shard's share of a split ack call.
CREATE OR REPLACE FUNCTION queen.ack_part(
    p_shards integer[], p_items integer[], p_group text, p_partition_ids bigint[], p_txids text[],
    p_offsets bigint[], p_lease_ids uuid[], p_statuses text[], p_errors text[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
LANGUAGE sql
AS $$
    SELECT p_items[a.item], a.success, a.msg_offset, a.noop, a.dlq, a.lease_released, a.error, a.queue_name
      FROM queen.ack(p_group, p_partition_ids, p_txids, p_offsets, p_lease_ids, p_statuses, p_errors) AS a
$$;
COMMENT ON FUNCTION queen.ack_part(integer[], integer[], text, bigint[], text[], bigint[], uuid[], text[], text[]) IS
  'queen.ack over one shard''s share of a split ack; items numbered as in the whole call.';
