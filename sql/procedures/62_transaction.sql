-- queen.transaction: any mix of pushes and acks in ONE transaction (docs/http-api.md, transaction).
-- Inputs: the push items exactly as queen.push takes them (keys, counts, items); the acks
--   as parallel arrays with a group per ack; lease ids that must still be live.
-- Output: one jsonb {success, error, failedOperation, push:[{item, status, partition_id,
--   offset}], ack:[{item, success, offset, noop, dlq, lease_released, error, queue_name}]}.
--   item is the 1-based position in the push item arrays / ack arrays.
-- Semantics: either every push and ack takes effect or none does. A duplicate push item
--   and a `noop` ack are not failures; an ack answered `already committed`, `unresolvable`
--   or `not applied`, and a required lease that is no longer live, are: the work of the
--   call is rolled back (a subtransaction) and success is false with the first failure.
--   Acks are applied per group, all acks of a group taken together (one ack call).
-- Tenancy: p_scope (sql/procedures/21_tenancy.sql) limits the acks and the required leases to
--   the scope's queues; another tenant's partition is answered as an unknown one, its lease as
--   one not held. Push items name stored queue keys, which carry their tenant already.
-- Lock order: partitions (push, by name) before cursors (ack, by partition id).

-- The scope is a new trailing parameter: drop the form without it where it is still installed.
DROP FUNCTION IF EXISTS queen.transaction(text[], text[], integer[], text[], uuid[], text[], text[], text[], bigint[],
                                          text[], bigint[], uuid[], text[], text[], uuid[]);

CREATE OR REPLACE FUNCTION queen.transaction(
    p_queues text[], p_partitions text[], p_counts integer[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[],
    p_ack_groups text[], p_ack_partition_ids bigint[], p_ack_txids text[], p_ack_offsets bigint[],
    p_ack_lease_ids uuid[], p_ack_statuses text[], p_ack_errors text[],
    p_required_leases uuid[], p_scope text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_push    jsonb := '[]'::jsonb;
    v_ack     jsonb := '[]'::jsonb;
    v_group   text;
    v_idx     integer[];
    v_rows    jsonb;
    v_fail    jsonb;
    v_lease   uuid;
BEGIN
    BEGIN
        FOREACH v_lease IN ARRAY coalesce(p_required_leases, '{}'::uuid[]) LOOP
            PERFORM 1 FROM queen.log_consumers lc
             WHERE lc.lease_id = queen.scoped_lease_id(v_lease, p_scope) AND lc.lease_expires_at > now();
            IF NOT FOUND THEN
                v_fail := jsonb_build_object('kind', 'lease', 'error',
                                             format('required lease %s is not held any more', v_lease));
                RAISE EXCEPTION USING ERRCODE = 'QN001';
            END IF;
        END LOOP;

        IF cardinality(p_txids) > 0 THEN
            SELECT coalesce(jsonb_agg(jsonb_build_object('item', r.item, 'status', r.status,
                                                         'partition_id', r.partition_id, 'offset', r.msg_offset)
                                      ORDER BY r.item), '[]'::jsonb)
              INTO v_push
              FROM queen.push(p_queues, p_partitions, p_counts, p_txids, p_trace_ids, p_producers, p_payloads) r;
        END IF;

        FOR v_group IN SELECT DISTINCT g FROM unnest(p_ack_groups) AS g ORDER BY 1 LOOP
            SELECT array_agg(i ORDER BY i) INTO v_idx
              FROM generate_subscripts(p_ack_groups, 1) AS i WHERE p_ack_groups[i] = v_group;
            SELECT jsonb_agg(jsonb_build_object('item', v_idx[a.item], 'success', a.success, 'offset', a.msg_offset,
                                                'noop', a.noop, 'dlq', a.dlq, 'lease_released', a.lease_released,
                                                'error', a.error, 'queue_name', a.queue_name))
              INTO v_rows
              FROM queen.ack(v_group,
                             queen.scoped_partition_ids(ARRAY(SELECT p_ack_partition_ids[i] FROM unnest(v_idx) AS i),
                                                        p_scope),
                             ARRAY(SELECT p_ack_txids[i] FROM unnest(v_idx) AS i),
                             ARRAY(SELECT p_ack_offsets[i] FROM unnest(v_idx) AS i),
                             ARRAY(SELECT p_ack_lease_ids[i] FROM unnest(v_idx) AS i),
                             ARRAY(SELECT p_ack_statuses[i] FROM unnest(v_idx) AS i),
                             ARRAY(SELECT p_ack_errors[i] FROM unnest(v_idx) AS i)) a;
            v_ack := v_ack || coalesce(v_rows, '[]'::jsonb);
        END LOOP;

        SELECT a INTO v_fail FROM jsonb_array_elements(v_ack) a
         WHERE NOT (a->>'success')::boolean
         ORDER BY (a->>'item')::integer LIMIT 1;
        IF v_fail IS NOT NULL THEN
            v_fail := v_fail || jsonb_build_object('kind', 'ack');
            RAISE EXCEPTION USING ERRCODE = 'QN001';
        END IF;
    EXCEPTION WHEN SQLSTATE 'QN001' THEN
        -- Everything of this call is rolled back; the answers computed so far are kept.
        RETURN jsonb_build_object('success', false, 'failure', v_fail, 'push', v_push, 'ack', v_ack);
    END;
    RETURN jsonb_build_object('success', true, 'push', v_push, 'ack', v_ack);
END;
$$;
COMMENT ON FUNCTION queen.transaction(text[], text[], integer[], text[], uuid[], text[], text[], text[], bigint[],
                                      text[], bigint[], uuid[], text[], text[], uuid[], text) IS
  'Pushes and acks in one transaction: all take effect or none (the first failure is reported).';
