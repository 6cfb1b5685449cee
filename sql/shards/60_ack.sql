-- The proxy's hand-written ack (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/60_ack.sql):
-- acks split by the shard their partition ids name, in one call.

-- queen_proxy.shards_of_ids(ids): the logical shard of each partition id (its low bits).
CREATE OR REPLACE FUNCTION queen_proxy.shards_of_ids(p_ids bigint[])
RETURNS integer[]
LANGUAGE sql IMMUTABLE
AS $$ SELECT array_agg((coalesce(i, 0) & 1023)::integer ORDER BY o) FROM unnest(p_ids) WITH ORDINALITY AS u(i, o) $$;
COMMENT ON FUNCTION queen_proxy.shards_of_ids IS
  'The logical shard of each partition id (its low bits).';

-- queen.ack: each ack to the shard its partition id names, in one PL/Proxy call.
CREATE OR REPLACE FUNCTION queen.ack(
    p_group text, p_partition_ids bigint[], p_txids text[], p_offsets bigint[],
    p_lease_ids uuid[], p_statuses text[], p_errors text[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
LANGUAGE plpgsql
AS $$
BEGIN
    IF coalesce(cardinality(p_partition_ids), 0) = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT a.* FROM queen_proxy.ack_part(queen_proxy.shards_of_ids(p_partition_ids),
                                             (SELECT array_agg(i ORDER BY i)
                                                FROM generate_series(1, cardinality(p_partition_ids)) AS i),
                                             p_group, p_partition_ids, p_txids, p_offsets, p_lease_ids, p_statuses,
                                             p_errors) AS a
         ORDER BY a.item;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.ack(text, bigint[], text[], bigint[], uuid[], text[], text[]) IS
  'Proxy: acks split by the shard their partition ids name, in one call; one row per ack, in order.';
