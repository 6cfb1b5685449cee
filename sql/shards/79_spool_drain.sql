-- The proxy's hand-written spool drain (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/79_spool_drain.sql):
-- a drain split by shard in one call through queen_proxy.push_spooled_part.

-- queen.push_spooled: a spool drain's items split by shard in one call, as queen.push.
CREATE OR REPLACE FUNCTION queen.push_spooled(
    p_queues text[], p_partitions text[], p_counts integer[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[], p_probe_since timestamptz[])
RETURNS TABLE(item integer, status text, partition_id bigint, msg_offset bigint, created_at timestamptz)
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM queen.push_check_arguments(p_queues, p_partitions, p_counts, p_txids, p_payloads);
    PERFORM queen_proxy.check_queue_limit(p_queues, true);
    RETURN QUERY
        SELECT r.item, r.status, r.partition_id, r.msg_offset, r.created_at
          FROM queen_proxy.item_keys(p_queues, p_partitions, p_counts, cardinality(p_txids)) AS k
         CROSS JOIN LATERAL queen_proxy.push_spooled_part(k.hashes, k.items, k.queues, k.partitions, p_txids,
                                                          p_trace_ids, p_producers, p_payloads, p_probe_since) AS r
         ORDER BY r.item;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.push_spooled(text[], text[], integer[], text[], uuid[], text[], text[], timestamptz[]) IS
  'Proxy: a spool drain split by shard in one call; one row per item, in item order.';
