-- Streams: the server side of the streaming SDK (docs/streams.md): registered queries, the
-- key/value state of each (query, source partition) lane, and the cycle that applies a
-- lane's state ops, sink pushes and source ack in one transaction.
-- State rows are insert-only per value (migration 24): every lookup of one key takes the
-- newest version first (ORDER BY version DESC LIMIT 1), so a held snapshot does not make a
-- cycle walk the versions it keeps.
-- Lock order of a cycle: the query row (FOR KEY SHARE; a reset takes it FOR UPDATE), the lane
-- row (FOR UPDATE), then queen.push's partitions and cursors, then the source cursor (the ack)
-- — partitions before cursors, as queen.transaction and queen.push take them.
-- Failures a client caused raise SQLSTATE QNCYC inside the cycle, which answers them as a
-- value with nothing applied.

-- queen.stream_register: registers a query by name (POST /streams/v1/queries). New: created,
-- fresh. Same hash: source and sink updated. Another hash: with p_reset every state row and
-- lane of the query is deleted and the new hash stored (reset); without it nothing changes
-- and conflict is true.
DROP FUNCTION IF EXISTS queen.stream_register(text, text, text, text, boolean);  -- it gained p_tenant
CREATE OR REPLACE FUNCTION queen.stream_register(
    p_name text, p_source_queue text, p_sink_queue text, p_config_hash text, p_reset boolean DEFAULT false,
    p_tenant text DEFAULT NULL)
RETURNS TABLE(query_id uuid, fresh boolean, reset boolean, conflict boolean)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    q record;
BEGIN
    -- A tenant's query and queue names are keys (21_tenancy.sql); the broker passes keys.
    p_name := queen.sql_api_queue_key(p_name, p_tenant);
    p_source_queue := queen.sql_api_queue_key(p_source_queue, p_tenant);
    p_sink_queue := queen.sql_api_queue_key(p_sink_queue, p_tenant);
    fresh := false; reset := false; conflict := false;
    INSERT INTO queen.stream_queries AS sq (name, source_queue, sink_queue, config_hash)
    VALUES (p_name, p_source_queue, p_sink_queue, p_config_hash)
    ON CONFLICT (name) DO NOTHING
    RETURNING sq.id INTO query_id;
    IF FOUND THEN
        fresh := true;
        RETURN NEXT;
        RETURN;
    END IF;
    -- FOR UPDATE waits for the cycles in flight (they hold the row FOR KEY SHARE).
    SELECT sq.* INTO q FROM queen.stream_queries sq WHERE sq.name = p_name FOR UPDATE;
    query_id := q.id;
    IF q.config_hash <> p_config_hash THEN
        IF NOT coalesce(p_reset, false) THEN
            conflict := true;
            RETURN NEXT;
            RETURN;
        END IF;
        DELETE FROM queen.stream_state s WHERE s.query_id = q.id;
        DELETE FROM queen.stream_lanes l WHERE l.query_id = q.id;
        reset := true;
    END IF;
    IF q.config_hash <> p_config_hash OR q.source_queue <> p_source_queue
       OR q.sink_queue IS DISTINCT FROM p_sink_queue THEN
        UPDATE queen.stream_queries sq
           SET source_queue = p_source_queue, sink_queue = p_sink_queue, config_hash = p_config_hash,
               updated_at = now()
         WHERE sq.id = q.id;
    END IF;
    RETURN NEXT;
END;
$$;
COMMENT ON FUNCTION queen.stream_register(text, text, text, text, boolean, text) IS
  'Registers a stream query by name: fresh, updated, reset (state dropped) or a config_hash conflict.';

-- queen.stream_value_ripe: true when value.windowEnd is a JSON number at or before p_at.
CREATE OR REPLACE FUNCTION queen.stream_value_ripe(p_value jsonb, p_at numeric)
RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    SELECT jsonb_typeof(p_value -> 'windowEnd') = 'number' AND (p_value ->> 'windowEnd')::numeric <= p_at
$$;

-- queen.stream_state_max_rows() and queen.stream_state_max_bytes(): the most rows, and bytes of
-- keys and values (octet_length(key) + octet_length(value::text)), one state/get answer holds:
-- the one source of both (docs/streams.md, "Limits"). A cycle may not leave a lane past them.
CREATE OR REPLACE FUNCTION queen.stream_state_max_rows()
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 10000 $$;
COMMENT ON FUNCTION queen.stream_state_max_rows() IS
  'The most state rows one stream state/get answer, and so one lane, holds.';

CREATE OR REPLACE FUNCTION queen.stream_state_max_bytes()
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 16777216::bigint $$;
COMMENT ON FUNCTION queen.stream_state_max_bytes() IS
  'The most bytes of keys and values one stream state/get answer, and so one lane, holds.';

-- queen.stream_state_rows: the state rows of one lane, sorted by key (byte order). p_keys (NULL
-- or empty: every key), p_key_prefix and p_ripe_at_or_before (rows whose value.windowEnd is a
-- number at or before it) combine with AND. Listed keys are looked up one by one, newest
-- version first; the other forms read the lane's key range. No scope check: callers make it.
CREATE OR REPLACE FUNCTION queen.stream_state_rows(
    p_query_id uuid, p_partition_id bigint, p_keys text[], p_key_prefix text, p_ripe_at_or_before numeric)
RETURNS TABLE(key text, value jsonb, updated_at timestamptz)
LANGUAGE plpgsql STABLE
-- Key lookups newest version first: a bitmap scan (the planner's pick once a held snapshot has
-- left many versions) reads every version of a key (docs/architecture.md, "Plans that stay right").
SET enable_bitmapscan = off
AS $$
#variable_conflict use_column
BEGIN
    IF cardinality(p_keys) > 0 THEN
        RETURN QUERY
            SELECT s.key::text, s.value, s.updated_at
              FROM (SELECT DISTINCT k FROM unnest(p_keys) AS k) u
             CROSS JOIN LATERAL (
                   SELECT s.key, s.value, s.updated_at FROM queen.stream_state s
                    WHERE s.query_id = p_query_id AND s.partition_id = p_partition_id AND s.key = u.k
                    ORDER BY s.version DESC LIMIT 1) s
             WHERE (p_key_prefix IS NULL OR starts_with(s.key, p_key_prefix))
               AND (p_ripe_at_or_before IS NULL OR queen.stream_value_ripe(s.value, p_ripe_at_or_before))
             ORDER BY s.key;
    ELSE
        RETURN QUERY
            SELECT s.key::text, s.value, s.updated_at FROM queen.stream_state s
             WHERE s.query_id = p_query_id AND s.partition_id = p_partition_id
               AND (p_key_prefix IS NULL OR s.key >= p_key_prefix)
               AND (p_key_prefix IS NULL OR starts_with(s.key, p_key_prefix))
               AND (p_ripe_at_or_before IS NULL OR queen.stream_value_ripe(s.value, p_ripe_at_or_before))
             ORDER BY s.key;
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.stream_state_rows(uuid, bigint, text[], text, numeric) IS
  'The state rows of one stream lane, filtered by keys, key prefix and ripeness, sorted by key.';

-- queen.stream_state_size: how many of those rows there are (counted up to one past
-- queen.stream_state_max_rows()) and their bytes of keys and values, read here so that no
-- caller holds an answer it must refuse.
CREATE OR REPLACE FUNCTION queen.stream_state_size(
    p_query_id uuid, p_partition_id bigint, p_keys text[] DEFAULT NULL, p_key_prefix text DEFAULT NULL,
    p_ripe_at_or_before numeric DEFAULT NULL)
RETURNS TABLE(state_rows bigint, state_bytes bigint)
LANGUAGE sql STABLE
AS $$
    SELECT count(*), coalesce(sum(octet_length(r.key) + octet_length(r.value::text)), 0)::bigint
      FROM (SELECT * FROM queen.stream_state_rows(p_query_id, p_partition_id, p_keys, p_key_prefix,
                                                  p_ripe_at_or_before)
             LIMIT queen.stream_state_max_rows() + 1) r
$$;
COMMENT ON FUNCTION queen.stream_state_size(uuid, bigint, text[], text, numeric) IS
  'Rows (counted to one past the limit) and bytes of keys and values of a stream lane''s filtered state.';

-- queen.stream_state_get: the state rows of one lane (queen.stream_state_rows), whole, or
-- refused with QN413 naming the limit when they are more rows or bytes than one answer holds
-- (counted first, so that nothing past the limits is sent). A query outside the tenant scope
-- (sql/procedures/21_tenancy.sql) is an unknown one: no rows.
DROP FUNCTION IF EXISTS queen.stream_state_get(uuid, bigint, text[], text, numeric, integer);
DROP FUNCTION IF EXISTS queen.stream_state_get(uuid, bigint, text[], text, numeric, integer, text);  -- lost p_limit
DROP FUNCTION IF EXISTS queen.stream_cycle(uuid, bigint, text, text[], text[], jsonb[], text[], text[], integer[],
                                           text[], uuid[], text[], text[], integer[], text, bigint, uuid, text, text,
                                           boolean);

CREATE OR REPLACE FUNCTION queen.stream_state_get(
    p_query_id uuid, p_partition_id bigint, p_keys text[] DEFAULT NULL, p_key_prefix text DEFAULT NULL,
    p_ripe_at_or_before numeric DEFAULT NULL, p_scope text DEFAULT NULL)
RETURNS TABLE(key text, value jsonb, updated_at timestamptz)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    sz record;
BEGIN
    IF queen.scoped_stream_query_id(p_query_id, p_scope) IS DISTINCT FROM p_query_id THEN
        RETURN;
    END IF;
    SELECT * INTO sz FROM queen.stream_state_size(p_query_id, p_partition_id, p_keys, p_key_prefix, p_ripe_at_or_before);
    IF sz.state_rows > queen.stream_state_max_rows() THEN
        RAISE EXCEPTION 'the state asked for has more than % rows, the most one answer holds; ask for fewer with keys or key_prefix',
              queen.stream_state_max_rows() USING ERRCODE = 'QN413';
    END IF;
    IF sz.state_bytes > queen.stream_state_max_bytes() THEN
        RAISE EXCEPTION 'the state asked for holds more than % bytes of keys and values, the most one answer holds; ask for fewer with keys or key_prefix',
              queen.stream_state_max_bytes() USING ERRCODE = 'QN413';
    END IF;
    RETURN QUERY SELECT * FROM queen.stream_state_rows(p_query_id, p_partition_id, p_keys, p_key_prefix,
                                                       p_ripe_at_or_before);
END;
$$;
COMMENT ON FUNCTION queen.stream_state_get(uuid, bigint, text[], text, numeric, text) IS
  'The state rows of one stream lane, filtered and sorted by key; QN413 past the answer limits.';

-- queen.stream_check_lane_size: raises QNCYC naming the limit when the lane now holds more state
-- rows or bytes than its own whole-lane state/get could return.
CREATE OR REPLACE FUNCTION queen.stream_check_lane_size(p_query_id uuid, p_partition_id bigint)
RETURNS void
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    sz record;
BEGIN
    SELECT * INTO sz FROM queen.stream_state_size(p_query_id, p_partition_id);
    IF sz.state_rows > queen.stream_state_max_rows() THEN
        RAISE EXCEPTION 'the cycle would leave the lane with more than % state rows, the most one state/get answer holds',
              queen.stream_state_max_rows() USING ERRCODE = 'QNCYC';
    END IF;
    IF sz.state_bytes > queen.stream_state_max_bytes() THEN
        RAISE EXCEPTION 'the cycle would leave the lane with % bytes of state keys and values, more than the % one state/get answer holds',
              sz.state_bytes, queen.stream_state_max_bytes() USING ERRCODE = 'QNCYC';
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.stream_check_lane_size(uuid, bigint) IS
  'Raises QNCYC when a stream lane holds more state than one whole-lane state/get answer may.';

-- queen.stream_ack_offset: the offset a cycle's ack names, resolved as queen.ack resolves it
-- (a stored transaction id at or below the cursor or inside the live span, else a search of
-- the live span), read without locking the cursor; NULL when it resolves nowhere. The ack
-- itself is then applied at this offset under the cursor's lock.
CREATE OR REPLACE FUNCTION queen.stream_ack_offset(p_partition_id bigint, p_group text, p_txid text)
RETURNS bigint
LANGUAGE plpgsql STABLE
-- Key lookups newest version first: a bitmap scan (the planner's pick once a held snapshot has
-- left many versions) reads every version of a key (docs/architecture.md, "Plans that stay right").
SET enable_bitmapscan = off
AS $$
DECLARE
    cur   record;
    v_off bigint;
    v_live boolean;
BEGIN
    SELECT lc.committed, lc.lease_end, lc.lease_id IS NOT NULL AND lc.lease_expires_at > now() AS live
      INTO cur
      FROM queen.log_consumers lc
     WHERE lc.partition_id = p_partition_id AND lc.consumer_group = p_group
     ORDER BY lc.version DESC LIMIT 1;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT d.msg_offset INTO v_off FROM queen.log_dedup d
     WHERE d.partition_id = p_partition_id AND d.transaction_id = p_txid;
    IF v_off IS NOT NULL AND v_off > cur.committed AND NOT (cur.live AND v_off <= cur.lease_end) THEN
        v_off := NULL;  -- a reused id outside the span: look inside the span
    END IF;
    IF v_off IS NULL AND cur.live THEN
        v_off := queen.find_in_span(p_partition_id, cur.committed, cur.lease_end, p_txid);
    END IF;
    RETURN v_off;
END;
$$;
COMMENT ON FUNCTION queen.stream_ack_offset(bigint, text, text) IS
  'The offset a stream cycle''s ack names within its group''s span, or NULL (no lock taken).';

-- queen.stream_check_lease: raises QNCYC 'Invalid or expired lease' unless p_lease is NULL or
-- the live lease of the group's cursor on the partition.
CREATE OR REPLACE FUNCTION queen.stream_check_lease(p_partition_id bigint, p_group text, p_lease uuid)
RETURNS void
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF p_lease IS NOT NULL AND NOT EXISTS (
           SELECT 1 FROM queen.log_consumers lc
            WHERE lc.partition_id = p_partition_id AND lc.consumer_group = p_group
              AND lc.lease_id = p_lease AND lc.lease_expires_at > now()) THEN
        RAISE EXCEPTION 'Invalid or expired lease' USING ERRCODE = 'QNCYC';
    END IF;
END;
$$;

-- queen.stream_settle_lease: the live lease of the group's cursor on the partition (the cycle's)
-- released, or kept and marked counted (lease_counted) so that its expiry counts no attempt;
-- NULL when there is no live lease, else whether it was released.
CREATE OR REPLACE FUNCTION queen.stream_settle_lease(p_partition_id bigint, p_group text, p_release boolean)
RETURNS boolean
LANGUAGE plpgsql
SET enable_bitmapscan = off
AS $$
DECLARE
    cur record;
BEGIN
    SELECT lc.ctid AS tid, lc.lease_id, lc.lease_expires_at INTO cur FROM queen.log_consumers lc
     WHERE lc.partition_id = p_partition_id AND lc.consumer_group = p_group
     ORDER BY lc.version DESC LIMIT 1
       FOR UPDATE;
    IF NOT FOUND OR cur.lease_id IS NULL OR cur.lease_expires_at <= now() THEN
        RETURN NULL;
    END IF;
    IF p_release THEN
        UPDATE queen.log_consumers lc
           SET lease_id = NULL, lease_end = NULL, lease_expires_at = NULL, lease_counted = false
         WHERE lc.ctid = cur.tid;
        RETURN true;
    END IF;
    UPDATE queen.log_consumers lc SET lease_counted = true WHERE lc.ctid = cur.tid;
    RETURN false;
END;
$$;
COMMENT ON FUNCTION queen.stream_settle_lease(bigint, text, boolean) IS
  'A stream cycle''s live lease released, or kept and marked counted; NULL when none is live.';

-- queen.stream_cycle: one cycle of a stream lane (POST /streams/v1/cycle), in ONE transaction.
-- Inputs: the query and source partition; the consumer group of the source; state ops as
--   parallel arrays (type 'upsert' | 'delete', key, value); the sink pushes as queen.push takes
--   them, with p_derive[k] the 0-based request position of SQL item k when its transaction id
--   must be derived (NULL otherwise); the ack (p_ack_txid NULL: none; p_ack_offset when the
--   broker resolved it; status 'completed' or 'dlq'; error text); p_ack_lease, the cycle's
--   lease, checked live when given, with or without an ack; and p_release_lease.
-- Output: one jsonb {success, error?, applied, source_queue, state_ops_applied, push:[{item, status,
--   partition_id, offset, transaction_id}], ack: null | {offset, noop, dlq, lease_released, queue_name}}.
-- Semantics (docs/streams.md): state ops in order, then the pushes (dedup, order), then the
--   ack; any failure rolls all of it back and is reported with success false. A cycle whose ack
--   is a noop (its message already at or below the cursor: a late or replayed cycle) applies
--   nothing and answers success with applied false, since its state would overwrite newer
--   state. A cycle may not leave its lane with more state than one state/get answer holds
--   (queen.stream_check_lane_size). The ack of a
--   completion commits through the named message; the lease is then released, or with
--   p_release_lease false kept and marked counted (lease_counted), so that its expiry counts
--   no attempt. A 'dlq' ack dead-letters the message and releases the lease. A sink item
--   without a transaction id gets one derived from (query, partition, acked offset, item
--   position) when the cycle acks, so a retried cycle pushes nothing twice.
CREATE OR REPLACE FUNCTION queen.stream_cycle(
    p_query_id uuid, p_partition_id bigint, p_group text,
    p_op_types text[], p_op_keys text[], p_op_values jsonb[],
    p_queues text[], p_partitions text[], p_counts integer[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[], p_derive integer[],
    p_ack_txid text, p_ack_offset bigint, p_ack_lease uuid, p_ack_status text, p_ack_error text,
    p_release_lease boolean DEFAULT true, p_scope text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET enable_seqscan = off
-- Key lookups newest version first: a bitmap scan (the planner's pick once a held snapshot has
-- left many versions) reads every version of a key (docs/architecture.md, "Plans that stay right").
SET enable_bitmapscan = off
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
    q         record;
    v_prev    tid;
    v_ops     integer := 0;
    v_push    jsonb := '[]'::jsonb;
    v_ack     jsonb := NULL;
    v_off     bigint;
    a         record;
    v_released boolean;
    v_upserts boolean := false;
    i         integer;
BEGIN
    IF p_ack_status IS NOT NULL AND p_ack_status NOT IN ('completed', 'dlq') THEN
        RAISE EXCEPTION 'stream_cycle: ack status must be completed or dlq' USING ERRCODE = '22023';
    END IF;
    BEGIN
        SELECT sq.id, sq.source_queue INTO q FROM queen.stream_queries sq
         WHERE sq.id = p_query_id AND queen.in_tenant_scope(queen.queue_key_tenant(sq.name), p_scope) FOR KEY SHARE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'unknown query %', p_query_id USING ERRCODE = 'QNCYC';
        END IF;
        IF NOT EXISTS (SELECT 1 FROM queen.log_partitions lp JOIN queen.queues qu ON qu.id = lp.queue_id
                        WHERE lp.id = p_partition_id AND qu.name = q.source_queue) THEN
            RAISE EXCEPTION 'partition % is not a partition of the source queue %', p_partition_id,
                queen.queue_local_name(q.source_queue)
                  USING ERRCODE = 'QNCYC';
        END IF;
        INSERT INTO queen.stream_lanes (query_id, partition_id) VALUES (p_query_id, p_partition_id)
        ON CONFLICT DO NOTHING;
        PERFORM 1 FROM queen.stream_lanes l
         WHERE l.query_id = p_query_id AND l.partition_id = p_partition_id FOR UPDATE;

        -- The lease, and the acked offset, read first: derived transaction ids name it, and an
        -- ack at or below the cursor makes the whole cycle a replay.
        PERFORM queen.stream_check_lease(p_partition_id, p_group, p_ack_lease);
        IF p_ack_txid IS NOT NULL THEN
            v_off := coalesce(p_ack_offset, queen.stream_ack_offset(p_partition_id, p_group, p_ack_txid));
            IF v_off IS NULL THEN
                RAISE EXCEPTION 'the acknowledged message (transactionId %) is not in the span of group % on partition %',
                      p_ack_txid, p_group, p_partition_id USING ERRCODE = 'QNCYC';
            END IF;
            -- A completion at or below the cursor is queen.ack's noop; a dead-lettering one is
            -- refused by queen.ack below ('already committed').
            IF p_ack_status = 'completed' AND v_off <= (SELECT lc.committed FROM queen.log_consumers lc
                          WHERE lc.partition_id = p_partition_id AND lc.consumer_group = p_group
                          ORDER BY lc.version DESC LIMIT 1) THEN
                RAISE EXCEPTION 'replayed' USING ERRCODE = 'QNNOP';
            END IF;
        END IF;

        -- 1. State ops, in order.
        FOR i IN 1 .. coalesce(cardinality(p_op_types), 0) LOOP
            IF p_op_types[i] IS NULL OR p_op_types[i] NOT IN ('upsert', 'delete') OR p_op_keys[i] IS NULL
               OR (p_op_types[i] = 'upsert' AND p_op_values[i] IS NULL) THEN
                RAISE EXCEPTION 'state_ops[%] is not an upsert with a key and a value or a delete with a key', i - 1
                      USING ERRCODE = 'QNCYC';
            END IF;
            SELECT s.ctid INTO v_prev FROM queen.stream_state s
             WHERE s.query_id = p_query_id AND s.partition_id = p_partition_id AND s.key = p_op_keys[i]
             ORDER BY s.version DESC LIMIT 1;
            IF FOUND THEN
                DELETE FROM queen.stream_state s WHERE s.ctid = v_prev;
            END IF;
            IF p_op_types[i] = 'upsert' THEN
                v_upserts := true;
                INSERT INTO queen.stream_state (query_id, partition_id, key, version, value)
                VALUES (p_query_id, p_partition_id, p_op_keys[i], nextval('queen.stream_state_version'), p_op_values[i]);
            END IF;
            v_ops := v_ops + 1;
        END LOOP;
        IF v_upserts THEN
            PERFORM queen.stream_check_lane_size(p_query_id, p_partition_id);
        END IF;

        -- 2. Sink pushes.
        IF cardinality(p_txids) > 0 THEN
            IF v_off IS NOT NULL THEN
                FOR i IN 1 .. cardinality(p_txids) LOOP
                    IF p_derive[i] IS NOT NULL THEN
                        p_txids[i] := md5(format('%s/%s/%s/%s', p_query_id, p_partition_id, v_off, p_derive[i]))::uuid::text;
                    END IF;
                END LOOP;
            END IF;
            SELECT coalesce(jsonb_agg(jsonb_build_object('item', r.item, 'status', r.status,
                                                         'partition_id', r.partition_id, 'offset', r.msg_offset,
                                                         'transaction_id', p_txids[r.item])
                                      ORDER BY r.item), '[]'::jsonb)
              INTO v_push
              FROM queen.push(p_queues, p_partitions, p_counts, p_txids, p_trace_ids, p_producers, p_payloads) r;
        END IF;

        -- 3. The source ack.
        IF p_ack_txid IS NOT NULL THEN
            SELECT * INTO a FROM queen.ack(p_group, ARRAY[p_partition_id], ARRAY[p_ack_txid], ARRAY[v_off],
                                           ARRAY[p_ack_lease], ARRAY[p_ack_status], ARRAY[p_ack_error]);
            IF NOT a.success THEN
                PERFORM queen.stream_check_lease(p_partition_id, p_group, p_ack_lease);
                RAISE EXCEPTION 'the acknowledgement of transactionId % failed: %', p_ack_txid, a.error
                      USING ERRCODE = 'QNCYC';
            END IF;
            IF a.noop THEN
                -- Another ack moved the cursor past it since the check above.
                RAISE EXCEPTION 'replayed' USING ERRCODE = 'QNNOP';
            END IF;
            -- The live lease is the cycle's: the ack named it, or applied inside it.
            v_released := coalesce(queen.stream_settle_lease(p_partition_id, p_group,
                                                             p_ack_status = 'dlq' OR coalesce(p_release_lease, true)),
                                   a.lease_released);
            v_ack := jsonb_build_object('offset', v_off, 'noop', a.noop, 'dlq', a.dlq,
                                        'lease_released', v_released, 'queue_name', a.queue_name);
        END IF;
    EXCEPTION
        WHEN SQLSTATE 'QNNOP' THEN
            -- A replay: everything of this call is rolled back, and that is its success. A lease
            -- it names (checked live) is still kept or released as it asks.
            v_released := false;
            IF p_ack_lease IS NOT NULL THEN
                v_released := coalesce(queen.stream_settle_lease(p_partition_id, p_group,
                                                                 coalesce(p_release_lease, true)), false);
            END IF;
            RETURN jsonb_build_object('success', true, 'applied', false, 'source_queue', q.source_queue,
                                      'state_ops_applied', 0, 'push', '[]'::jsonb,
                                      'ack', jsonb_build_object('offset', v_off, 'noop', true, 'dlq', false,
                                                                'lease_released', v_released,
                                                                'queue_name', q.source_queue));
        WHEN SQLSTATE 'QNCYC' OR SQLSTATE 'QN429' THEN
            -- Everything of this call is rolled back (the block is a subtransaction).
            RETURN jsonb_build_object('success', false, 'error', SQLERRM, 'state_ops_applied', 0,
                                      'push', '[]'::jsonb, 'ack', NULL);
    END;
    RETURN jsonb_build_object('success', true, 'applied', true, 'source_queue', q.source_queue,
                              'state_ops_applied', v_ops, 'push', v_push, 'ack', v_ack);
END;
$$;
COMMENT ON FUNCTION queen.stream_cycle(uuid, bigint, text, text[], text[], jsonb[], text[], text[], integer[], text[],
                                       uuid[], text[], text[], integer[], text, bigint, uuid, text, text, boolean,
                                       text) IS
  'One stream cycle: state ops, sink pushes and the source ack in one transaction, all or nothing.';
