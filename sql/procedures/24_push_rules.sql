-- The argument rules of a push, one definition for every body that takes a push: queen.push
-- and queen.push_spooled (40_push.sql, 79_spool_drain.sql), their C twin's callers, and a shard
-- proxy's queen.push and queen.push_spooled (sql/shards/40_push.sql, 79_spool_drain.sql):
-- `queen shards init` applies this file to the proxy too. The C twin (ext/push.c,
-- ext/push_keys.c) states the same rules, held to these by regress/sql/ext_push.sql.
-- Applied to a shard proxy too.
-- Lock order: none; these only read their arguments.

-- queen.push_check_arguments: refuses (22004) a push whose key or item arrays are missing.
CREATE OR REPLACE FUNCTION queen.push_check_arguments(
    p_queues text[], p_partitions text[], p_counts integer[], p_txids text[], p_payloads text[])
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF p_queues IS NULL OR p_partitions IS NULL OR p_counts IS NULL OR p_txids IS NULL OR p_payloads IS NULL THEN
        RAISE EXCEPTION 'push: queues, partitions, counts, transaction ids and payloads must not be NULL'
              USING ERRCODE = '22004';
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.push_check_arguments(text[], text[], integer[], text[], text[]) IS
  'Refuses (22004) a push whose key or item arrays are missing.';

-- queen.push_key_ranges: the keys of a push call in lock order — (queue, partition) sorted by
-- bytes — each with the 1-based range lo..hi of its items in the item arrays (items come
-- grouped by key, in key order). Refuses key arrays of different lengths, NULL names, NULL or
-- negative counts, and counts that do not add up to p_item_count.
-- One definition for every procedure that pushes by key, on a shard proxy too.
CREATE OR REPLACE FUNCTION queen.push_key_ranges(
    p_queues text[], p_partitions text[], p_counts integer[], p_item_count integer)
RETURNS TABLE(queue text, part text, lo integer, hi integer)
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF cardinality(p_queues) <> cardinality(p_partitions) OR cardinality(p_queues) <> cardinality(p_counts) THEN
        RAISE EXCEPTION 'push: key arrays differ in length' USING ERRCODE = '22023';
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(p_queues, p_partitions, p_counts) AS u(queue, part, cnt)
                WHERE u.queue IS NULL OR u.part IS NULL OR u.cnt IS NULL OR u.cnt < 0) THEN
        RAISE EXCEPTION 'push: queue and partition names must not be NULL, counts not NULL or negative'
              USING ERRCODE = '22023';
    END IF;
    IF (SELECT coalesce(sum(c), 0) FROM unnest(p_counts) c) <> p_item_count THEN
        RAISE EXCEPTION 'push: item arrays do not match the key counts' USING ERRCODE = '22023';
    END IF;
    RETURN QUERY
        SELECT u.queue, u.part,
               (sum(u.cnt) OVER (ORDER BY u.ord) - u.cnt + 1)::integer,
               (sum(u.cnt) OVER (ORDER BY u.ord))::integer
          FROM unnest(p_queues, p_partitions, p_counts) WITH ORDINALITY AS u(queue, part, cnt, ord)
         ORDER BY u.queue COLLATE "C", u.part COLLATE "C";
END;
$$;
COMMENT ON FUNCTION queen.push_key_ranges(text[], text[], integer[], integer) IS
  'The keys of a push in lock order with the item range of each; validates the key arrays.';
