-- The proxy's hand-written tenant scope check (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/21_tenancy.sql).

-- queen.scoped_partition_ids: each id checked against the tenant scope on its own shard, in
-- one call; without a scope the ids as they are (as on one database).
CREATE OR REPLACE FUNCTION queen.scoped_partition_ids(p_ids bigint[], p_scope text)
RETURNS bigint[]
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_scope IS NULL OR coalesce(cardinality(p_ids), 0) = 0 THEN
        RETURN p_ids;
    END IF;
    RETURN (SELECT array_agg(s.partition_id ORDER BY s.item)
              FROM queen_proxy.scoped_partition_ids_part(
                       queen_proxy.shards_of_ids(p_ids),
                       (SELECT array_agg(i ORDER BY i) FROM generate_series(1, cardinality(p_ids)) AS i),
                       p_ids, p_scope) AS s);
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.scoped_partition_ids(bigint[], text) IS
  'Proxy: each partition id checked against the tenant scope on its shard; 0 for one outside it.';
