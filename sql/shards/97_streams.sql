-- The proxy's hand-written stream functions (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/97_streams.sql): a query is
-- registered on every shard under the same id (queen.stream_query_id_by_name); a lane's state
-- lives on the shard of its source partition, and its cycle runs there.

-- queen.stream_register: on every shard; a conflict or a reset anywhere is the answer.
CREATE OR REPLACE FUNCTION queen.stream_register(
    p_name text, p_source_queue text, p_sink_queue text, p_config_hash text, p_reset boolean DEFAULT false,
    p_tenant text DEFAULT NULL)
RETURNS TABLE(query_id uuid, fresh boolean, reset boolean, conflict boolean)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        SELECT min(r.query_id::text)::uuid, bool_and(r.fresh), bool_or(r.reset), bool_or(r.conflict)
          FROM queen_proxy.stream_register_on_all(p_name, p_source_queue, p_sink_queue, p_config_hash, p_reset,
                                                  p_tenant) AS r;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.stream_register(text, text, text, text, boolean, text) IS
  'Proxy: a stream query registered on every shard under one id.';

-- queen.stream_state_get: on the shard of the partition; its refusal past the answer limits
-- (QN413) comes back as the shard raised it.
DROP FUNCTION IF EXISTS queen.stream_state_get(uuid, bigint, text[], text, numeric, integer, text);  -- lost p_limit

CREATE OR REPLACE FUNCTION queen.stream_state_get(
    p_query_id uuid, p_partition_id bigint, p_keys text[] DEFAULT NULL, p_key_prefix text DEFAULT NULL,
    p_ripe_at_or_before numeric DEFAULT NULL, p_scope text DEFAULT NULL)
RETURNS TABLE(key text, value jsonb, updated_at timestamptz)
LANGUAGE plpgsql
AS $$
BEGIN
    RETURN QUERY
        SELECT * FROM queen_proxy.stream_state_get(p_query_id, p_partition_id, p_keys, p_key_prefix,
                                                   p_ripe_at_or_before, p_scope);
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.stream_state_get(uuid, bigint, text[], text, numeric, text) IS
  'Proxy: a stream lane''s state rows from the shard of its partition.';

-- queen.stream_cycle: one local transaction on the shard of the source partition, which every
-- sink push must share (409 otherwise, nothing applied), as a transaction's.
CREATE OR REPLACE FUNCTION queen.stream_cycle(
    p_query_id uuid, p_partition_id bigint, p_group text,
    p_op_types text[], p_op_keys text[], p_op_values jsonb[],
    p_queues text[], p_partitions text[], p_counts integer[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[], p_derive integer[],
    p_ack_txid text, p_ack_offset bigint, p_ack_lease uuid, p_ack_status text, p_ack_error text,
    p_release_lease boolean DEFAULT true, p_scope text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM queen_proxy.check_queue_limit(p_queues);
    RETURN queen_proxy.stream_cycle(
        queen_proxy.call_shard(queen_proxy.touched_shards(p_queues, p_partitions, ARRAY[p_partition_id]),
                               'the stream cycle'),
        p_query_id, p_partition_id, p_group, p_op_types, p_op_keys, p_op_values, p_queues, p_partitions, p_counts,
        p_txids, p_trace_ids, p_producers, p_payloads, p_derive, p_ack_txid, p_ack_offset, p_ack_lease,
        p_ack_status, p_ack_error, p_release_lease, p_scope);
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.stream_cycle(uuid, bigint, text, text[], text[], jsonb[], text[], text[], integer[], text[],
                                       uuid[], text[], text[], integer[], text, bigint, uuid, text, text, boolean,
                                       text) IS
  'Proxy: a stream cycle on the shard of its source partition; QN409 when a sink push lives elsewhere.';
