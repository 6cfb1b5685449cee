-- The proxy's hand-written tenant usage (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/69_tenant_limits.sql):
-- every shard's share of each tenant's queues added up.

-- queen.tenant_usage: per tenant, its queues counted once and every shard's stored bytes.
CREATE OR REPLACE FUNCTION queen.tenant_usage(p_want_bytes boolean DEFAULT false)
RETURNS TABLE(tenant text, queues bigint, stored_bytes bigint)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        WITH bytes AS (SELECT u.tenant, sum(u.stored_bytes) AS stored
                         FROM queen_proxy.tenant_usage_every(p_want_bytes) AS u GROUP BY u.tenant),
             names AS (SELECT n.tenant, count(DISTINCT n.queue_name) AS queues
                         FROM queen_proxy.tenant_queue_names_every() AS n GROUP BY n.tenant)
        SELECT n.tenant, n.queues, coalesce(b.stored, 0)::bigint
          FROM names n LEFT JOIN bytes b ON b.tenant = n.tenant
         ORDER BY n.tenant;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.tenant_usage(boolean) IS
  'Proxy: per tenant, its queues once and every shard''s stored bytes.';
