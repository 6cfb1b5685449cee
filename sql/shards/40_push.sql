-- The proxy's hand-written push (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/40_push.sql):
-- a push split by shard in one call through queen_proxy.push_part.

-- queen_proxy.item_keys(queues, partitions, counts): a push's (queue, partition) keys as one
-- key per item, with each item's hash and position: what a split push sends. Refused as
-- queen.push refuses them (queen.push_key_ranges, sql/procedures/24_push_rules.sql) when the
-- key arrays do not add up to the items. No row for a push without items.
CREATE OR REPLACE FUNCTION queen_proxy.item_keys(p_queues text[], p_partitions text[], p_counts integer[],
                                                 p_items integer)
RETURNS TABLE(hashes integer[], items integer[], queues text[], partitions text[])
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM FROM queen.push_key_ranges(p_queues, p_partitions, p_counts, p_items);
    IF p_items = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT array_agg(queen.partition_hash(e.queue, e.part) ORDER BY e.i), array_agg(e.i::integer ORDER BY e.i),
               array_agg(e.queue ORDER BY e.i), array_agg(e.part ORDER BY e.i)
          FROM (SELECT k.queue, k.part, row_number() OVER (ORDER BY k.ord, g.n) AS i
                  FROM unnest(p_queues, p_partitions, p_counts) WITH ORDINALITY AS k(queue, part, cnt, ord)
                 CROSS JOIN LATERAL generate_series(1, k.cnt) AS g(n)) e;
END;
$$;
COMMENT ON FUNCTION queen_proxy.item_keys IS
  'A push''s (queue, partition) keys as one key per item, with each item''s hash and position: what a split push sends.';

-- queen.push: every item to the shard of its (queue, partition) in one PL/Proxy call; each
-- shard stores its share in one transaction (atomic per shard, docs/scaling.md). One row per
-- item, in item order, numbered as queen.push numbers them.
CREATE OR REPLACE FUNCTION queen.push(
    p_queues text[], p_partitions text[], p_counts integer[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[])
RETURNS TABLE(item integer, status text, partition_id bigint, msg_offset bigint, created_at timestamptz)
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM queen.push_check_arguments(p_queues, p_partitions, p_counts, p_txids, p_payloads);
    PERFORM queen_proxy.check_queue_limit(p_queues);
    RETURN QUERY
        SELECT r.item, r.status, r.partition_id, r.msg_offset, r.created_at
          FROM queen_proxy.item_keys(p_queues, p_partitions, p_counts, cardinality(p_txids)) AS k
         CROSS JOIN LATERAL queen_proxy.push_part(k.hashes, k.items, k.queues, k.partitions, p_txids, p_trace_ids,
                                                  p_producers, p_payloads) AS r
         ORDER BY r.item;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.push(text[], text[], integer[], text[], uuid[], text[], text[]) IS
  'Proxy: splits a push by shard in one call; atomic per shard; one row per item, in item order.';
