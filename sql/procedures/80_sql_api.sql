-- The SQL-level API: the broker's operations as stable, documented functions that an
-- application calls inside its OWN transaction, so that its writes, its ack and its
-- next-stage push commit together (docs/sql-api.md). They are thin wrappers over the
-- procedures the broker uses (queen.push, queen.pop, queen.ack), so the rules are the same.
-- Signatures here are a compatibility contract: change them only by adding functions or
-- trailing parameters with defaults (the older form is dropped, so calls keep resolving).
-- p_tenant (docs/tenancy.md): NULL names queues by their stored keys, as with tenancy off;
-- '' names the default tenant's queues; a tenant's name, that tenant's queues and partitions
-- only (queen.sql_api_queue_key, 21_tenancy.sql).

DROP FUNCTION IF EXISTS queen.send(text, jsonb, text, text, uuid);
DROP FUNCTION IF EXISTS queen.send_batch(text, jsonb[], text, text[]);
DROP FUNCTION IF EXISTS queen.claim(text, text, integer, text, boolean);
DROP FUNCTION IF EXISTS queen.ack_message(bigint, bigint, text, text, text, uuid);

-- queen.send(queue, payload, partition, transaction_id, trace_id, tenant): stores one message.
CREATE OR REPLACE FUNCTION queen.send(
    p_queue text, p_payload jsonb, p_partition text DEFAULT 'Default',
    p_transaction_id text DEFAULT NULL, p_trace_id uuid DEFAULT NULL, p_tenant text DEFAULT NULL)
RETURNS TABLE(message_id uuid, status text, partition_id bigint, "offset" bigint)
LANGUAGE sql
AS $$
    SELECT queen.check_payload_depths(ARRAY[p_payload]);
    SELECT queen.message_id(r.partition_id, r.msg_offset), r.status, r.partition_id, r.msg_offset
      FROM queen.push(ARRAY[queen.sql_api_queue_key(p_queue, p_tenant)], ARRAY[coalesce(p_partition, 'Default')], ARRAY[1],
                      ARRAY[coalesce(p_transaction_id, gen_random_uuid()::text)], ARRAY[p_trace_id],
                      ARRAY[NULL::text], ARRAY[coalesce(p_payload, 'null'::jsonb)::text]) r
$$;
COMMENT ON FUNCTION queen.send(text, jsonb, text, text, uuid, text) IS
  'Stores one message (dedup by transaction id as for HTTP pushes); returns its id and offset.';

-- queen.send_batch(queue, payloads, partition, transaction_ids, tenant): stores many messages
-- of one partition in order; transaction_ids may be NULL (generated) or parallel to payloads.
CREATE OR REPLACE FUNCTION queen.send_batch(
    p_queue text, p_payloads jsonb[], p_partition text DEFAULT 'Default', p_transaction_ids text[] DEFAULT NULL,
    p_tenant text DEFAULT NULL)
RETURNS TABLE(message_id uuid, status text, partition_id bigint, "offset" bigint)
LANGUAGE sql
AS $$
    SELECT queen.check_payload_depths(p_payloads);
    SELECT queen.message_id(r.partition_id, r.msg_offset), r.status, r.partition_id, r.msg_offset
      FROM queen.push(ARRAY[queen.sql_api_queue_key(p_queue, p_tenant)], ARRAY[coalesce(p_partition, 'Default')],
                      ARRAY[cardinality(p_payloads)],
                      ARRAY(SELECT coalesce(p_transaction_ids[i], gen_random_uuid()::text)
                              FROM generate_subscripts(p_payloads, 1) i ORDER BY i),
                      array_fill(NULL::uuid, ARRAY[cardinality(p_payloads)]),
                      array_fill(NULL::text, ARRAY[cardinality(p_payloads)]),
                      ARRAY(SELECT coalesce(p_payloads[i], 'null'::jsonb)::text
                              FROM generate_subscripts(p_payloads, 1) i ORDER BY i)) r
     ORDER BY r.item
$$;
COMMENT ON FUNCTION queen.send_batch(text, jsonb[], text, text[], text) IS
  'Stores messages of one partition in order, one segment; returns one row per payload.';

-- queen.claim(queue, consumer_group, batch, partition, auto_ack, tenant): leases the next span
-- (as a pop does) and returns its messages decoded, in offset order, with the lease id;
-- tombstoned messages are not returned.
CREATE OR REPLACE FUNCTION queen.claim(
    p_queue text, p_consumer_group text DEFAULT '__QUEUE_MODE__', p_batch integer DEFAULT 1,
    p_partition text DEFAULT NULL, p_auto_ack boolean DEFAULT false, p_tenant text DEFAULT NULL)
RETURNS TABLE(lease_id uuid, partition_id bigint, partition text, "offset" bigint, message_id uuid,
              transaction_id text, trace_id uuid, payload jsonb, created_at timestamptz)
LANGUAGE sql
AS $$
    SELECT p.lease_id, p.partition_id, p.partition_name, p.seg_first + f.idx,
           queen.message_id(p.partition_id, p.seg_first + f.idx), f.transaction_id, f.trace_id,
           queen.payload_jsonb(f.payload), f.created_at
      FROM (SELECT * FROM queen.pop(queen.sql_api_queue_key(p_queue, p_tenant), p_partition,
                                    coalesce(p_consumer_group, '__QUEUE_MODE__'), p_batch, 1, p_auto_ack, true, NULL)
             WHERE seg_body IS NOT NULL) p  -- not the counts row (55_pop.sql)
     CROSS JOIN LATERAL queen.decode_segment(p.seg_body) f
     WHERE p.seg_first + f.idx > p.span_start AND p.seg_first + f.idx <= p.span_end
       AND NOT coalesce(p.seg_first + f.idx = ANY (p.skip_offsets), false)  -- tombstoned
     ORDER BY p.seg_first + f.idx
$$;
COMMENT ON FUNCTION queen.claim(text, text, integer, text, boolean, text) IS
  'Leases the next span of a partition for a group and returns its messages (pop from SQL).';

-- queen.ack_message(partition_id, offset, consumer_group, status, error, lease_id, tenant): one
-- ack by offset, with the same rules as HTTP acks; answers like them. With a tenant, another
-- tenant's partition is answered as one that does not exist.
CREATE OR REPLACE FUNCTION queen.ack_message(
    p_partition_id bigint, p_offset bigint, p_consumer_group text DEFAULT '__QUEUE_MODE__',
    p_status text DEFAULT 'completed', p_error text DEFAULT NULL, p_lease_id uuid DEFAULT NULL,
    p_tenant text DEFAULT NULL)
RETURNS TABLE(success boolean, noop boolean, dlq boolean, lease_released boolean, error text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    IF p_status NOT IN ('completed', 'failed', 'retry', 'dlq') THEN
        RAISE EXCEPTION 'ack_message: status must be completed, failed, retry or dlq, got %', p_status
            USING ERRCODE = '22023';
    END IF;
    RETURN QUERY
        SELECT a.success, a.noop, a.dlq, a.lease_released, a.error
          FROM queen.ack(coalesce(p_consumer_group, '__QUEUE_MODE__'),
                         ARRAY[CASE WHEN p_tenant IS NULL THEN p_partition_id
                                    ELSE queen.scoped_partition_id(p_partition_id, p_tenant) END], ARRAY[''],
                         ARRAY[p_offset], ARRAY[p_lease_id], ARRAY[p_status], ARRAY[p_error]) a;
END;
$$;
COMMENT ON FUNCTION queen.ack_message(bigint, bigint, text, text, text, uuid, text) IS
  'Acknowledges (or nacks) a message by partition and offset for a group, as HTTP acks do.';
