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

-- queen.stream_state_get: the state rows of one lane, sorted by key (byte order), at most
-- p_limit of them. p_keys (NULL or empty: every key), p_key_prefix and p_ripe_at_or_before
-- (rows whose value.windowEnd is a number at or before it) combine with AND. Listed keys are
-- looked up one by one, newest version first; the other forms read the lane's key range.
-- stream_state_get and stream_cycle take the tenant scope (sql/procedures/21_tenancy.sql) as a
-- new trailing parameter: a query outside it is an unknown one. Drop the forms without it.
DROP FUNCTION IF EXISTS queen.stream_state_get(uuid, bigint, text[], text, numeric, integer);
DROP FUNCTION IF EXISTS queen.stream_cycle(uuid, bigint, text, text[], text[], jsonb[], text[], text[], integer[],
                                           text[], uuid[], text[], text[], integer[], text, bigint, uuid, text, text,
                                           boolean);

CREATE OR REPLACE FUNCTION queen.stream_state_get(
    p_query_id uuid, p_partition_id bigint, p_keys text[] DEFAULT NULL, p_key_prefix text DEFAULT NULL,
    p_ripe_at_or_before numeric DEFAULT NULL, p_limit integer DEFAULT NULL, p_scope text DEFAULT NULL)
RETURNS TABLE(key text, value jsonb, updated_at timestamptz)
LANGUAGE plpgsql STABLE
-- Key lookups newest version first: a bitmap scan (the planner's pick once a held snapshot has
-- left many versions) reads every version of a key (docs/architecture.md, "Plans that stay right").
SET enable_bitmapscan = off
AS $$
#variable_conflict use_column
BEGIN
    IF queen.scoped_stream_query_id(p_query_id, p_scope) IS DISTINCT FROM p_query_id THEN
        RETURN;
    END IF;
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
             ORDER BY s.key
             LIMIT p_limit;
    ELSE
        RETURN QUERY
            SELECT s.key::text, s.value, s.updated_at FROM queen.stream_state s
             WHERE s.query_id = p_query_id AND s.partition_id = p_partition_id
               AND (p_key_prefix IS NULL OR s.key >= p_key_prefix)
               AND (p_key_prefix IS NULL OR starts_with(s.key, p_key_prefix))
               AND (p_ripe_at_or_before IS NULL OR queen.stream_value_ripe(s.value, p_ripe_at_or_before))
             ORDER BY s.key
             LIMIT p_limit;
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.stream_state_get(uuid, bigint, text[], text, numeric, integer, text) IS
  'The state rows of one stream lane, filtered by keys, key prefix and ripeness, sorted by key.';

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

-- queen.stream_cycle: one cycle of a stream lane (POST /streams/v1/cycle), in ONE transaction.
-- Inputs: the query and source partition; the consumer group of the source; state ops as
--   parallel arrays (type 'upsert' | 'delete', key, value); the sink pushes as queen.push takes
--   them, with p_derive[k] the 0-based request position of SQL item k when its transaction id
--   must be derived (NULL otherwise); the ack (p_ack_txid NULL: none; p_ack_offset when the
--   broker resolved it; status 'completed' or 'dlq'; error text), and p_release_lease.
-- Output: one jsonb {success, error?, source_queue, state_ops_applied, push:[{item, status, partition_id,
--   offset, transaction_id}], ack: null | {offset, noop, dlq, lease_released, queue_name}}.
-- Semantics (docs/streams.md): state ops in order, then the pushes (dedup, order), then the
--   ack; any failure rolls all of it back and is reported with success false. The ack of a
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
    cur       record;
    v_released boolean;
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
                INSERT INTO queen.stream_state (query_id, partition_id, key, version, value)
                VALUES (p_query_id, p_partition_id, p_op_keys[i], nextval('queen.stream_state_version'), p_op_values[i]);
            END IF;
            v_ops := v_ops + 1;
        END LOOP;

        -- The acked offset, read first: derived transaction ids name it.
        IF p_ack_txid IS NOT NULL THEN
            PERFORM queen.stream_check_lease(p_partition_id, p_group, p_ack_lease);
            v_off := coalesce(p_ack_offset, queen.stream_ack_offset(p_partition_id, p_group, p_ack_txid));
            IF v_off IS NULL THEN
                RAISE EXCEPTION 'the acknowledged message (transactionId %) is not in the span of group % on partition %',
                      p_ack_txid, p_group, p_partition_id USING ERRCODE = 'QNCYC';
            END IF;
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
            v_released := a.lease_released;
            -- The cursor version queen.ack just wrote (locked by it in this transaction).
            SELECT lc.ctid AS tid, lc.lease_id, lc.lease_expires_at INTO cur FROM queen.log_consumers lc
             WHERE lc.partition_id = p_partition_id AND lc.consumer_group = p_group
             ORDER BY lc.version DESC LIMIT 1
               FOR UPDATE;
            -- The live lease is the cycle's when the ack named it, or when the ack applied inside
            -- it; a noop ack without a lease id (a retry) leaves another consumer's lease alone.
            IF cur.lease_id IS NOT NULL AND cur.lease_expires_at > now() AND (p_ack_lease IS NOT NULL OR NOT a.noop) THEN
                IF p_ack_status = 'dlq' OR coalesce(p_release_lease, true) THEN
                    UPDATE queen.log_consumers lc
                       SET lease_id = NULL, lease_end = NULL, lease_expires_at = NULL, lease_counted = false
                     WHERE lc.ctid = cur.tid;
                    v_released := true;
                ELSE
                    -- Kept on purpose: its expiry is a deferral and counts no attempt.
                    UPDATE queen.log_consumers lc SET lease_counted = true WHERE lc.ctid = cur.tid;
                    v_released := false;
                END IF;
            END IF;
            v_ack := jsonb_build_object('offset', v_off, 'noop', a.noop, 'dlq', a.dlq,
                                        'lease_released', v_released, 'queue_name', a.queue_name);
        END IF;
    EXCEPTION WHEN SQLSTATE 'QNCYC' OR SQLSTATE 'QN429' THEN
        -- Everything of this call is rolled back (the block is a subtransaction).
        RETURN jsonb_build_object('success', false, 'error', SQLERRM, 'state_ops_applied', 0,
                                  'push', '[]'::jsonb, 'ack', NULL);
    END;
    RETURN jsonb_build_object('success', true, 'source_queue', q.source_queue, 'state_ops_applied', v_ops,
                              'push', v_push, 'ack', v_ack);
END;
$$;
COMMENT ON FUNCTION queen.stream_cycle(uuid, bigint, text, text[], text[], jsonb[], text[], text[], integer[], text[],
                                       uuid[], text[], text[], integer[], text, bigint, uuid, text, text, boolean,
                                       text) IS
  'One stream cycle: state ops, sink pushes and the source ack in one transaction, all or nothing.';
