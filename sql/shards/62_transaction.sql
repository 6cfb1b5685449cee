-- The proxy's hand-written transaction (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/62_transaction.sql):
-- a transaction runs on the one shard its pushes and acks live on.

-- queen_proxy.call_shard(logical shards): the one logical shard a call runs on, given every
-- logical shard it touches (0 when none); refused (QN409) when they live on more than one
-- shard database, since PL/Proxy has no atomicity across shards. `what` names the call.
CREATE OR REPLACE FUNCTION queen_proxy.call_shard(p_shards integer[], p_what text)
RETURNS integer
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_databases integer;
BEGIN
    SELECT count(DISTINCT d.conninfo) INTO v_databases
      FROM queen.shard_databases() d WHERE d.logical_shard = ANY (p_shards);
    IF v_databases > 1 THEN
        RAISE EXCEPTION '% spans % shard databases: its pushes and acks must name partitions of one shard '
                        '(the same partition name in every queue; docs/scaling.md)', p_what, v_databases
              USING ERRCODE = 'QN409';
    END IF;
    RETURN coalesce(p_shards[1], 0);
END;
$$;
COMMENT ON FUNCTION queen_proxy.call_shard IS
  'The one logical shard a call runs on, given every logical shard it touches (0 when none).';

-- queen_proxy.touched_shards(queues, partitions, partition ids): the logical shards of
-- pushed (queue, partition) keys and of acked partition ids.
CREATE OR REPLACE FUNCTION queen_proxy.touched_shards(p_queues text[], p_partitions text[], p_partition_ids bigint[])
RETURNS integer[]
LANGUAGE sql STABLE
AS $$
    SELECT array_agg(DISTINCT s.shard)
      FROM (SELECT queen.partition_hash(u.queue, u.part) & (queen_proxy.logical_shards() - 1) AS shard
              FROM unnest(p_queues, p_partitions) AS u(queue, part)
            UNION
            SELECT (i & (queen_proxy.logical_shards() - 1))::integer FROM unnest(p_partition_ids) AS i
             WHERE i IS NOT NULL) s
$$;
COMMENT ON FUNCTION queen_proxy.touched_shards IS
  'The logical shards of pushed (queue, partition) keys and of acked partition ids.';

-- queen.transaction: one local transaction on the shard every push and ack lives on;
-- refused (QN409, nothing written) when they live on more than one.
CREATE OR REPLACE FUNCTION queen.transaction(
    p_queues text[], p_partitions text[], p_counts integer[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[],
    p_ack_groups text[], p_ack_partition_ids bigint[], p_ack_txids text[], p_ack_offsets bigint[],
    p_ack_lease_ids uuid[], p_ack_statuses text[], p_ack_errors text[],
    p_required_leases uuid[], p_scope text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM queen_proxy.check_queue_limit(p_queues);
    RETURN queen_proxy.transaction(
        queen_proxy.call_shard(queen_proxy.touched_shards(p_queues, p_partitions, p_ack_partition_ids),
                               'the transaction'),
        p_queues, p_partitions, p_counts, p_txids, p_trace_ids, p_producers, p_payloads, p_ack_groups,
        p_ack_partition_ids, p_ack_txids, p_ack_offsets, p_ack_lease_ids, p_ack_statuses, p_ack_errors,
        p_required_leases, p_scope);
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.transaction(text[], text[], integer[], text[], uuid[], text[], text[], text[], bigint[],
                                      text[], bigint[], uuid[], text[], text[], uuid[], text) IS
  'Proxy: a transaction on the one shard its pushes and acks live on; QN409 when they span shards.';
