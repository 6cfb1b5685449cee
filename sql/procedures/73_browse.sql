-- Message browsing (docs/operator-routes.md, "Browsing"): GET /api/v1/messages, its detail,
-- and /status/queues/:queue/messages. No per-message state is stored: a message's status is
-- worked out from the cursors, dead letters and tombstones of its partition, by the rules of
-- queen.message_status_rule, the one place they are written (the view queen.message_status in
-- 92_operator_views.sql uses them too).

-- queen.cursor_status(offset, committed, live lease end): one cursor's view of a message —
-- completed at or below committed, processing inside the live lease span, else pending (also
-- without a cursor: committed NULL).
CREATE OR REPLACE FUNCTION queen.cursor_status(p_offset bigint, p_committed bigint, p_live_lease_end bigint)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p_offset <= p_committed THEN 'completed'
                WHEN p_offset <= p_live_lease_end THEN 'processing'
                ELSE 'pending' END
$$;
COMMENT ON FUNCTION queen.cursor_status(bigint, bigint, bigint) IS
  'completed, processing or pending for one cursor (committed, live lease end) and an offset.';

-- queen.message_status_rule(offset, tombstoned, dead-lettered, queue-mode committed, its live
-- lease end, the named groups' committed offsets): the first rule that applies wins —
--   1. deleted (a tombstone); 2. dead_letter (a dead letter in any group);
--   3. with a queue-mode cursor: cursor_status of it;
--   4. with named groups only: completed when every one has committed it, else pending;
--   5. no cursor: pending.
-- For one group g alone, callers pass g's dead letters and g's cursor as the "queue-mode"
-- one, and no named groups.
CREATE OR REPLACE FUNCTION queen.message_status_rule(
    p_offset bigint, p_tombstoned boolean, p_dead_lettered boolean, p_qm_committed bigint,
    p_qm_live_lease_end bigint, p_bus_committed bigint[])
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p_tombstoned THEN 'deleted'
                WHEN p_dead_lettered THEN 'dead_letter'
                WHEN p_qm_committed IS NOT NULL THEN queen.cursor_status(p_offset, p_qm_committed, p_qm_live_lease_end)
                WHEN coalesce(cardinality(p_bus_committed), 0) > 0
                THEN CASE WHEN p_offset <= ALL (p_bus_committed) THEN 'completed' ELSE 'pending' END
                ELSE 'pending' END
$$;
COMMENT ON FUNCTION queen.message_status_rule(bigint, boolean, boolean, bigint, bigint, bigint[]) IS
  'A message''s status from its tombstone, dead letters and cursors (docs/operator-routes.md, "Browsing").';

-- queen.partition_cursor_summary(partition, group): what the status rules need of a
-- partition's cursors: the queue-mode cursor (committed, live lease end and expiry), the named
-- groups' committed offsets and names, and the cursor of p_group (NULL: none asked or none).
CREATE OR REPLACE FUNCTION queen.partition_cursor_summary(p_partition_id bigint, p_group text)
RETURNS TABLE(qm_committed bigint, qm_lease_end bigint, qm_lease_expires_at timestamptz,
              bus_committed bigint[], bus_groups text[], g_committed bigint, g_lease_end bigint,
              g_lease_expires_at timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT max(c.committed) FILTER (WHERE c.qm),
           max(c.lease_end) FILTER (WHERE c.qm AND c.live),
           max(c.lease_expires_at) FILTER (WHERE c.qm AND c.live),
           coalesce(array_agg(c.committed ORDER BY c.consumer_group) FILTER (WHERE NOT c.qm), '{}'),
           coalesce(array_agg(c.consumer_group ORDER BY c.consumer_group) FILTER (WHERE NOT c.qm), '{}'),
           max(c.committed) FILTER (WHERE c.consumer_group = p_group),
           max(c.lease_end) FILTER (WHERE c.consumer_group = p_group AND c.live),
           max(c.lease_expires_at) FILTER (WHERE c.consumer_group = p_group AND c.live)
      FROM (SELECT lc.consumer_group, lc.committed, lc.lease_end, lc.lease_expires_at,
                   lc.consumer_group = '__QUEUE_MODE__' AS qm,
                   coalesce(lc.lease_id IS NOT NULL AND lc.lease_expires_at > now(), false) AS live
              FROM queen.log_consumers lc
             WHERE lc.partition_id = p_partition_id) c
$$;
COMMENT ON FUNCTION queen.partition_cursor_summary(bigint, text) IS
  'A partition''s cursors as the status rules read them: queue mode, the named groups, one group.';

-- queen.segment_offset_at(partition, time): the last offset of the newest segment created at
-- or before that time, 0 when there is none. createdAt never goes backwards in a partition,
-- so a binary search over offsets on the segment primary key finds it: O(log offsets) probes,
-- two when the time lies after the newest or before the oldest segment.
CREATE OR REPLACE FUNCTION queen.segment_offset_at(p_partition_id bigint, p_at timestamptz)
RETURNS bigint
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_lo bigint := 0;   -- 0 or the end of a segment created at or before p_at
    v_hi bigint;        -- the answer is in [v_lo, v_hi]
    v_mid bigint;
    v_last bigint;
    v_at timestamptz;
BEGIN
    SELECT s.last_offset, s.created_at INTO v_hi, v_at FROM queen.log_segments s
     WHERE s.partition_id = p_partition_id ORDER BY s.last_offset DESC LIMIT 1;
    IF v_hi IS NULL THEN
        RETURN 0;
    ELSIF v_at <= p_at THEN
        RETURN v_hi;
    END IF;
    SELECT s.created_at INTO v_at FROM queen.log_segments s
     WHERE s.partition_id = p_partition_id ORDER BY s.last_offset LIMIT 1;
    IF v_at > p_at THEN
        RETURN 0;
    END IF;
    v_hi := v_hi - 1;
    WHILE v_lo < v_hi LOOP
        v_mid := v_lo + (v_hi - v_lo + 1) / 2;
        SELECT s.last_offset, s.created_at INTO v_last, v_at FROM queen.log_segments s
         WHERE s.partition_id = p_partition_id AND s.last_offset >= v_mid
         ORDER BY s.last_offset LIMIT 1;
        IF v_at <= p_at THEN
            v_lo := v_last;
        ELSE
            v_hi := v_mid - 1;
        END IF;
    END LOOP;
    RETURN v_lo;
END;
$$;
COMMENT ON FUNCTION queen.segment_offset_at(bigint, timestamptz) IS
  'Last offset of a partition''s newest segment created at or before a time (0: none); a binary search.';

-- queen.browse_messages(queue, partition, namespace, task, status, group, from, to, limit,
-- offset): one page of the stored messages created in [from, to], newest first (createdAt,
-- then partition id and offset descending), with their status (for p_group alone when
-- given), queue-mode status, how many named groups consumed them and of how many, and the
-- queue-mode lease expiry while one holds them. NULL filters match everything; the status
-- filter applies before paging.
-- Work: each partition in scope costs a few index probes to bound its window
-- (segment_offset_at); the window's segment keys are sorted newest first (no body read);
-- statuses are worked out segment by segment in that order, and reading stops once
-- offset + limit messages matched. Only the page's segments are decoded. Where this database
-- cannot decode a segment (zstd without queen_ext) the frame columns are NULL and the first
-- row of that segment carries seg_first and seg_body for the caller to decode.
-- The tenant scope (sql/procedures/21_tenancy.sql) is a new trailing parameter: only the
-- partitions of its queues are browsed. Drop the form without it.
DROP FUNCTION IF EXISTS queen.browse_messages(text, text, text, text, text, text, timestamptz, timestamptz, integer,
                                              integer);
CREATE OR REPLACE FUNCTION queen.browse_messages(
    p_queue text, p_partition text, p_namespace text, p_task text, p_status text, p_group text,
    p_from timestamptz, p_to timestamptz, p_limit integer, p_offset integer, p_scope text DEFAULT NULL)
RETURNS TABLE(partition_id bigint, msg_offset bigint, queue text, partition text, namespace text, task text,
              queue_priority integer, created_at timestamptz, status text, queue_status text,
              consumed_by integer, total_groups integer, lease_expires_at timestamptz,
              transaction_id text, trace_id uuid, producer_sub text, seg_first bigint, seg_body bytea)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    v_need  bigint := p_offset::bigint + p_limit;
    v_seen  bigint := 0;  -- messages matched so far, before this page included
    v_segs  refcursor;
    r       record;
    v_tombs bigint[];
    v_dls   bigint[];
    v_offs  bigint[];
    v_st    text[];
    v_qst   text[];
    v_cb    integer[];
    v_n     integer;
    v_skip  integer;
    v_take  integer;
    v_body  bytea;
BEGIN
    IF p_limit <= 0 OR p_offset < 0 THEN
        RETURN;
    END IF;
    OPEN v_segs FOR
        WITH scope AS MATERIALIZED (
            SELECT p.id, p.name, q.name AS qname, q.namespace AS qns, q.task AS qtask, q.priority AS qprio,
                   queen.segment_offset_at(p.id, p_from - interval '1 microsecond') AS lo,
                   queen.segment_offset_at(p.id, p_to) AS hi
              FROM queen.queues q
              JOIN queen.log_partitions p ON p.queue_id = q.id
             WHERE (p_queue IS NULL OR q.name = p_queue)
               AND (p_partition IS NULL OR p.name = p_partition)
               AND (p_namespace IS NULL OR q.namespace = p_namespace)
               AND (p_task IS NULL OR q.task = p_task)
               AND queen.in_tenant_scope(q.tenant, p_scope)
        ), live AS MATERIALIZED (
            SELECT sc.*, cs.*
              FROM scope sc
             CROSS JOIN LATERAL queen.partition_cursor_summary(sc.id, p_group) cs
             WHERE sc.hi > sc.lo
        )
        SELECT l.*, s.first_offset, s.last_offset, s.created_at AS seg_at
          FROM live l
         CROSS JOIN LATERAL (SELECT sg.first_offset, sg.last_offset, sg.created_at FROM queen.log_segments sg
                              WHERE sg.partition_id = l.id AND sg.last_offset > l.lo AND sg.last_offset <= l.hi) s
         ORDER BY s.created_at DESC, l.id DESC, s.last_offset DESC;
    LOOP
        FETCH v_segs INTO r;
        EXIT WHEN NOT FOUND;
        v_tombs := coalesce(queen.tombstones_in(r.id, r.first_offset - 1, r.last_offset), '{}');
        v_dls := ARRAY(SELECT d.msg_offset FROM queen.dead_letters d
                        WHERE d.partition_id = r.id AND d.msg_offset BETWEEN r.first_offset AND r.last_offset
                          AND (p_group IS NULL OR d.consumer_group = p_group));
        SELECT array_agg(x.o ORDER BY x.o DESC), array_agg(x.st ORDER BY x.o DESC),
               array_agg(x.qst ORDER BY x.o DESC), array_agg(x.cb ORDER BY x.o DESC)
          INTO v_offs, v_st, v_qst, v_cb
          FROM (SELECT g.o,
                       CASE WHEN p_group IS NULL
                            THEN queen.message_status_rule(g.o, g.o = ANY (v_tombs), g.o = ANY (v_dls),
                                                           r.qm_committed, r.qm_lease_end, r.bus_committed)
                            ELSE queen.message_status_rule(g.o, g.o = ANY (v_tombs), g.o = ANY (v_dls),
                                                           r.g_committed, r.g_lease_end, '{}')
                       END AS st,
                       queen.cursor_status(g.o, r.qm_committed, r.qm_lease_end) AS qst,
                       (SELECT count(*) FROM unnest(r.bus_committed) b WHERE b >= g.o)::integer AS cb
                  FROM generate_series(r.first_offset, r.last_offset) g(o)) x
         WHERE p_status IS NULL OR x.st = p_status;
        v_n := coalesce(cardinality(v_offs), 0);
        CONTINUE WHEN v_n = 0;
        IF v_seen + v_n <= p_offset THEN
            v_seen := v_seen + v_n;
            CONTINUE;
        END IF;
        v_skip := greatest(p_offset - v_seen, 0);
        v_take := least(v_n - v_skip, v_need - v_seen - v_skip);
        v_seen := v_seen + v_skip + v_take;
        SELECT sg.body INTO v_body FROM queen.log_segments sg
         WHERE sg.partition_id = r.id AND sg.last_offset = r.last_offset;
        RETURN QUERY
            SELECT r.id, v_offs[i], r.qname, r.name, r.qns, r.qtask, r.qprio, r.seg_at, v_st[i], v_qst[i], v_cb[i],
                   cardinality(r.bus_committed),
                   CASE WHEN v_qst[i] = 'processing' THEN r.qm_lease_expires_at END,
                   f.transaction_id, f.trace_id, f.producer_sub,
                   CASE WHEN f.transaction_id IS NULL AND i = v_skip + 1 THEN r.first_offset END,
                   CASE WHEN f.transaction_id IS NULL AND i = v_skip + 1 THEN v_body END
              FROM generate_series(v_skip + 1, v_skip + v_take) i
              LEFT JOIN queen.decode_segment(v_body) f ON f.idx = v_offs[i] - r.first_offset
             ORDER BY i;
        EXIT WHEN v_seen >= v_need;
    END LOOP;
    CLOSE v_segs;
END;
$$;
COMMENT ON FUNCTION queen.browse_messages(text, text, text, text, text, text, timestamptz, timestamptz, integer, integer,
                                          text) IS
  'One page of stored messages in a time window, newest first, with their status; reads segments newest first and stops at offset + limit matches.';

-- queen.browse_mode(partitions): whether any of them has a queue-mode cursor, and how many
-- distinct named groups have cursors there.
CREATE OR REPLACE FUNCTION queen.browse_mode(p_partition_ids bigint[])
RETURNS TABLE(has_queue_mode boolean, bus_groups_count integer)
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(bool_or(c.consumer_group = '__QUEUE_MODE__'), false),
           (count(DISTINCT c.consumer_group) FILTER (WHERE c.consumer_group <> '__QUEUE_MODE__'))::integer
      FROM queen.log_consumers c
     WHERE c.partition_id = ANY (p_partition_ids)
$$;
COMMENT ON FUNCTION queen.browse_mode(bigint[]) IS
  'Queue mode present, and the number of distinct named groups, over the cursors of some partitions.';

-- queen.message_detail(partition, transaction id): the message (queen.find_message) with its
-- frame, status, queue-mode lease expiry, tombstone time, newest dead letter's error and
-- attempts, and its queue's options. No row: no such message. payload (and seg_body) are NULL
-- for a deleted message; seg_first and seg_body are set only when this database cannot decode
-- the segment (zstd without queen_ext).
CREATE OR REPLACE FUNCTION queen.message_detail(p_partition_id bigint, p_txid text)
RETURNS TABLE(msg_offset bigint, queue text, partition text, namespace text, task text, created_at timestamptz,
              transaction_id text, trace_id uuid, producer_sub text, payload text, seg_first bigint,
              seg_body bytea, status text, lease_expires_at timestamptz, deleted_at timestamptz,
              error_message text, retry_count integer, lease_time integer, retry_limit integer,
              retry_delay integer, ttl integer, priority integer)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    v_off bigint := queen.find_message(p_partition_id, p_txid);
BEGIN
    IF v_off IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT v_off, q.name, p.name, q.namespace, q.task, s.created_at, f.transaction_id, f.trace_id,
               f.producer_sub,
               CASE WHEN t.deleted_at IS NULL THEN f.payload END,
               CASE WHEN t.deleted_at IS NULL AND f.transaction_id IS NULL THEN s.first_offset END,
               CASE WHEN t.deleted_at IS NULL AND f.transaction_id IS NULL THEN s.body END,
               queen.message_status_rule(v_off, t.deleted_at IS NOT NULL, dl.attempts IS NOT NULL,
                                         cs.qm_committed, cs.qm_lease_end, cs.bus_committed),
               CASE WHEN queen.cursor_status(v_off, cs.qm_committed, cs.qm_lease_end) = 'processing'
                    THEN cs.qm_lease_expires_at END,
               t.deleted_at, dl.error_message, dl.attempts, q.lease_time, q.retry_limit, q.retry_delay, q.ttl,
               q.priority
          FROM (SELECT sg.first_offset, sg.created_at, sg.body FROM queen.log_segments sg
                 WHERE sg.partition_id = p_partition_id AND sg.last_offset >= v_off
                 ORDER BY sg.last_offset LIMIT 1) s
          JOIN queen.log_partitions p ON p.id = p_partition_id
          JOIN queen.queues q ON q.id = p.queue_id
          LEFT JOIN LATERAL (SELECT d.idx, d.transaction_id, d.trace_id, d.producer_sub, d.payload
                               FROM queen.decode_segment(s.body) d WHERE d.idx = v_off - s.first_offset) f ON true
          LEFT JOIN queen.message_tombstones t ON t.partition_id = p_partition_id AND t.msg_offset = v_off
          LEFT JOIN LATERAL (SELECT d.error_message, d.attempts FROM queen.dead_letters d
                              WHERE d.partition_id = p_partition_id AND d.msg_offset = v_off
                              ORDER BY d.failed_at DESC, d.id DESC LIMIT 1) dl ON true
         CROSS JOIN LATERAL queen.partition_cursor_summary(p_partition_id, NULL) cs;
END;
$$;
COMMENT ON FUNCTION queen.message_detail(bigint, text) IS
  'A stored message by partition and transaction id, with its status, tombstone, dead letter and queue options.';

-- queen.message_consumer_groups(partition, offset): every cursor of the partition (queue mode
-- included) by name, whether it committed the offset, and the expiry of its live lease when
-- that lease holds the offset.
CREATE OR REPLACE FUNCTION queen.message_consumer_groups(p_partition_id bigint, p_offset bigint)
RETURNS TABLE(consumer_group text, consumed boolean, lease_expires_at timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT c.consumer_group, c.committed >= p_offset,
           CASE WHEN c.lease_id IS NOT NULL AND c.lease_expires_at > now()
                     AND p_offset > c.committed AND p_offset <= c.lease_end THEN c.lease_expires_at END
      FROM queen.log_consumers c
     WHERE c.partition_id = p_partition_id
     ORDER BY c.consumer_group
$$;
COMMENT ON FUNCTION queen.message_consumer_groups(bigint, bigint) IS
  'Every cursor of a partition: whether it consumed an offset, and its live lease expiry over it.';

-- queen.partition_groups(ids): the consumer groups with a cursor on any of these partitions.
CREATE OR REPLACE FUNCTION queen.partition_groups(p_partition_ids bigint[])
RETURNS TABLE(consumer_group text)
LANGUAGE sql STABLE
AS $$
    SELECT DISTINCT c.consumer_group FROM queen.log_consumers c WHERE c.partition_id = ANY (p_partition_ids)
$$;
COMMENT ON FUNCTION queen.partition_groups(bigint[]) IS
  'Distinct consumer groups with a cursor on any of the partitions (the proxy''s browse_mode).';
