-- The SQL-level API of streams (docs/sql-api.md, docs/streams.md): the three operations of
-- the HTTP routes for an application that runs a stream stage in its own transaction, with
-- the same rules. queen.stream_register and queen.stream_state_get (97_streams.sql) serve as
-- they are; queen.stream_commit takes a cycle's parts as JSON and calls queen.stream_cycle;
-- queen.stream_states shows the state.
-- Signatures here are a compatibility contract: change them only by adding functions or
-- trailing parameters with defaults (the older form is dropped, so calls keep resolving).

-- queen.stream_commit(query_id, partition_id, consumer_group, state_ops, push_items, ack,
-- release_lease, tenant): one cycle, its parts given as the HTTP body gives them (state_ops
-- [{type, key, value}], push_items [{queue, partition, payload, transactionId, traceId}],
-- ack {transactionId, leaseId, status, error}). Returns {success, error?, state_ops_applied,
-- push:[{item, status, partition_id, offset, transaction_id}], ack} as queen.stream_cycle
-- does (item: the 1-based position in push_items). Parts that are not of the documented shape
-- raise SQLSTATE 22023 naming them; failures of the cycle itself come back as success false
-- with nothing applied.
DROP FUNCTION IF EXISTS queen.stream_commit(uuid, bigint, text, jsonb, jsonb, jsonb, boolean);  -- it gained p_tenant
CREATE OR REPLACE FUNCTION queen.stream_commit(
    p_query_id uuid, p_partition_id bigint, p_consumer_group text DEFAULT '__QUEUE_MODE__',
    p_state_ops jsonb DEFAULT '[]', p_push_items jsonb DEFAULT '[]', p_ack jsonb DEFAULT NULL,
    p_release_lease boolean DEFAULT true, p_tenant text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_ops     jsonb := coalesce(p_state_ops, '[]'::jsonb);
    v_items   jsonb := coalesce(p_push_items, '[]'::jsonb);
    v_status  text;
    v_queues  text[];
    v_parts   text[];
    v_counts  integer[];
    v_txids   text[];
    v_traces  uuid[];
    v_payloads text[];
    v_derive  integer[];
    v_order   integer[];
    v_answer  jsonb;
BEGIN
    IF jsonb_typeof(v_ops) <> 'array' OR jsonb_typeof(v_items) <> 'array'
       OR (p_ack IS NOT NULL AND jsonb_typeof(p_ack) NOT IN ('object', 'null')) THEN
        RAISE EXCEPTION 'stream_commit: state_ops and push_items must be arrays, ack an object or NULL'
              USING ERRCODE = '22023';
    END IF;
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(v_items) i
                WHERE jsonb_typeof(i) <> 'object' OR jsonb_typeof(i -> 'queue') IS DISTINCT FROM 'string') THEN
        RAISE EXCEPTION 'stream_commit: every push item needs a queue' USING ERRCODE = '22023';
    END IF;
    IF p_ack IS NOT NULL AND jsonb_typeof(p_ack) = 'object' THEN
        v_status := CASE coalesce(p_ack ->> 'status', 'completed')
                    WHEN 'completed' THEN 'completed' WHEN 'success' THEN 'completed'
                    WHEN 'failed' THEN 'dlq' WHEN 'dlq' THEN 'dlq' END;
        IF v_status IS NULL OR jsonb_typeof(p_ack -> 'transactionId') IS DISTINCT FROM 'string' THEN
            RAISE EXCEPTION 'stream_commit: ack needs a transactionId and a status of completed, success, failed or dlq'
                  USING ERRCODE = '22023';
        END IF;
    END IF;
    -- Push items grouped by (queue, partition) in request order, as queen.push takes them.
    SELECT array_agg(k.queue ORDER BY k.first), array_agg(k.part ORDER BY k.first), array_agg(k.n ORDER BY k.first)
      INTO v_queues, v_parts, v_counts
      FROM (SELECT i ->> 'queue' AS queue, coalesce(i ->> 'partition', 'Default') AS part,
                   min(o) AS first, count(*)::integer AS n
              FROM jsonb_array_elements(v_items) WITH ORDINALITY AS e(i, o)
             GROUP BY 1, 2) k;
    SELECT array_agg(coalesce(i ->> 'transactionId', gen_random_uuid()::text) ORDER BY k.first, o),
           array_agg((i ->> 'traceId')::uuid ORDER BY k.first, o),
           array_agg(coalesce(i -> 'payload', 'null'::jsonb)::text ORDER BY k.first, o),
           array_agg(CASE WHEN i ? 'transactionId' THEN NULL ELSE (o - 1)::integer END ORDER BY k.first, o),
           array_agg(o::integer ORDER BY k.first, o)
      INTO v_txids, v_traces, v_payloads, v_derive, v_order
      FROM jsonb_array_elements(v_items) WITH ORDINALITY AS e(i, o)
      JOIN (SELECT i2 ->> 'queue' AS queue, coalesce(i2 ->> 'partition', 'Default') AS part, min(o2) AS first
              FROM jsonb_array_elements(v_items) WITH ORDINALITY AS e2(i2, o2) GROUP BY 1, 2) k
        ON k.queue = i ->> 'queue' AND k.part = coalesce(i ->> 'partition', 'Default');
    -- A tenant's sink queues by their keys (21_tenancy.sql).
    v_queues := ARRAY(SELECT queen.sql_api_queue_key(u.queue, p_tenant)
                        FROM unnest(v_queues) WITH ORDINALITY AS u(queue, n) ORDER BY u.n);
    PERFORM queen.check_payload_depths(ARRAY(SELECT coalesce(i -> 'payload', 'null'::jsonb)
                                               FROM jsonb_array_elements(v_items) i));
    v_answer := queen.stream_cycle(
        p_query_id, p_partition_id, coalesce(p_consumer_group, '__QUEUE_MODE__'),
        ARRAY(SELECT o ->> 'type' FROM jsonb_array_elements(v_ops) WITH ORDINALITY AS x(o, n) ORDER BY n),
        ARRAY(SELECT o ->> 'key' FROM jsonb_array_elements(v_ops) WITH ORDINALITY AS x(o, n) ORDER BY n),
        ARRAY(SELECT o -> 'value' FROM jsonb_array_elements(v_ops) WITH ORDINALITY AS x(o, n) ORDER BY n),
        coalesce(v_queues, '{}'), coalesce(v_parts, '{}'), coalesce(v_counts, '{}'), coalesce(v_txids, '{}'),
        coalesce(v_traces, '{}'), array_fill(NULL::text, ARRAY[coalesce(cardinality(v_txids), 0)]),
        coalesce(v_payloads, '{}'), coalesce(v_derive, '{}'),
        CASE WHEN v_status IS NOT NULL THEN p_ack ->> 'transactionId' END, NULL,
        CASE WHEN v_status IS NOT NULL THEN (p_ack ->> 'leaseId')::uuid END, v_status,
        CASE WHEN v_status = 'dlq' THEN coalesce(p_ack ->> 'error', 'Streaming cycle reported failure') END,
        coalesce(p_release_lease, true), p_tenant);
    -- Push rows renumbered to their position in push_items.
    IF (v_answer ->> 'success')::boolean THEN
        v_answer := jsonb_set(v_answer, '{push}', coalesce(
            (SELECT jsonb_agg(r || jsonb_build_object('item', v_order[(r ->> 'item')::integer])
                              ORDER BY v_order[(r ->> 'item')::integer])
               FROM jsonb_array_elements(v_answer -> 'push') r), '[]'::jsonb));
    END IF;
    RETURN v_answer;
END;
$$;
COMMENT ON FUNCTION queen.stream_commit(uuid, bigint, text, jsonb, jsonb, jsonb, boolean, text) IS
  'One stream cycle from JSON parts (state ops, push items, ack), all or nothing, as POST /streams/v1/cycle.';

-- queen.stream_states: every live state row with its query and source partition by name, and
-- the query's tenant; with the reader's rights (a tenant's role sees its own, migration 26).
CREATE OR REPLACE VIEW queen.stream_states WITH (security_invoker = true) AS
SELECT sq.name AS query, sq.id AS query_id, q.name AS source_queue, p.name AS partition, s.partition_id,
       s.key::text AS key, s.value, pg_column_size(s.value) AS value_bytes, s.updated_at,
       queen.queue_key_tenant(sq.name) AS tenant
  FROM queen.stream_state s
  JOIN queen.stream_queries sq ON sq.id = s.query_id
  LEFT JOIN queen.log_partitions p ON p.id = s.partition_id
  LEFT JOIN queen.queues q ON q.id = p.queue_id;
COMMENT ON VIEW queen.stream_states IS 'Live stream state rows with their query, source queue and partition names.';
