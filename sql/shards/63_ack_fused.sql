-- The proxy's hand-written fused ack (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/63_ack_fused.sql):
-- fused acks split by shard in one call.

-- queen.ack_fused: as queen.ack, for the ack fusion's call. A request whose acks name more
-- than one logical shard is left out (no row): the broker then sends it alone through
-- queen.ack, as it does with any request queen.ack_fused leaves.
CREATE OR REPLACE FUNCTION queen.ack_fused(
    p_group text, p_requests integer[], p_partition_ids bigint[], p_txids text[], p_offsets bigint[],
    p_lease_ids uuid[], p_statuses text[], p_errors text[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
LANGUAGE plpgsql
AS $$
DECLARE
    v_items integer[]; v_requests integer[]; v_ids bigint[]; v_txids text[]; v_offsets bigint[];
    v_leases uuid[]; v_statuses text[]; v_errors text[];
BEGIN
    WITH acks AS (
        SELECT u.* FROM unnest(p_requests, p_partition_ids, p_txids, p_offsets, p_lease_ids, p_statuses, p_errors)
                        WITH ORDINALITY AS u(request, pid, txid, off, lease, st, err, i)
    ), one_shard AS (
        SELECT a.request FROM acks a GROUP BY a.request HAVING count(DISTINCT coalesce(a.pid, 0) & 1023) = 1
    )
    SELECT array_agg(a.i::integer ORDER BY a.i), array_agg(a.request ORDER BY a.i), array_agg(a.pid ORDER BY a.i),
           array_agg(a.txid ORDER BY a.i), array_agg(a.off ORDER BY a.i), array_agg(a.lease ORDER BY a.i),
           array_agg(a.st ORDER BY a.i), array_agg(a.err ORDER BY a.i)
      INTO v_items, v_requests, v_ids, v_txids, v_offsets, v_leases, v_statuses, v_errors
      FROM acks a WHERE a.request IN (SELECT o.request FROM one_shard o);
    IF v_items IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT a.* FROM queen_proxy.ack_fused_part(queen_proxy.shards_of_ids(v_ids), v_items, p_group, v_requests, v_ids,
                                                   v_txids, v_offsets, v_leases, v_statuses, v_errors) AS a
         ORDER BY a.item;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.ack_fused(text, integer[], bigint[], text[], bigint[], uuid[], text[], text[]) IS
  'Proxy: fused acks split by shard in one call; a request spanning shards is left for its own queen.ack.';
