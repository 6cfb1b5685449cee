-- The proxy's hand-written lease extension (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/66_leases.sql):
-- on the shard databases a lease id names (sql/procedures/54_lease_ids.sql), with no lookup;
-- every database for an id that names none.

-- queen_proxy.lease_databases(lease id): one logical shard of each shard database the lease's
-- cursors may be on: the databases hosting a logical shard s whose bit (s % 32) the id's mask
-- sets; every database for a version-4 id (made where the setting was not yet known). The
-- first logical shard when the mask names none (an id this deployment never issued), so the
-- call still validates its arguments there.
CREATE OR REPLACE FUNCTION queen_proxy.lease_databases(p_lease_id uuid)
RETURNS integer[]
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(array_agg(d.shard ORDER BY d.shard), ARRAY[0])
      FROM (SELECT min(s.logical_shard) AS shard
              FROM queen.shard_databases() s,
                   (SELECT CASE WHEN substr(p_lease_id::text, 15, 1) = '8'
                                THEN ('x' || lpad(right(p_lease_id::text, 8), 16, '0'))::bit(64)::bigint END AS mask) m
             WHERE m.mask IS NULL OR (m.mask >> (s.logical_shard % 32)) & 1 = 1
             GROUP BY s.conninfo) d
$$;
COMMENT ON FUNCTION queen_proxy.lease_databases IS
  'One logical shard of each shard database the lease''s cursors may be on: the databases hosting a logical shard s whose bit (s % 32) the id''s mask sets.';

-- queen.extend_lease: queen.extend_lease on the databases the lease id names, in one call,
-- answered as one database answers a lease's extension: 'extended' when any cursor was
-- (expires_at the earliest new expiry, partitions all extended), else 'expired' when any
-- still carries it, else 'not_found'.
CREATE OR REPLACE FUNCTION queen.extend_lease(p_lease_id uuid, p_seconds integer, p_scope text DEFAULT NULL)
RETURNS TABLE(status text, expires_at timestamptz, partitions integer)
LANGUAGE plpgsql
AS $$
BEGIN
    RETURN QUERY
        SELECT CASE WHEN sum(e.partitions) > 0 THEN 'extended'
                    WHEN bool_or(e.status = 'expired') THEN 'expired'
                    ELSE 'not_found' END,
               min(e.expires_at) FILTER (WHERE e.status = 'extended'), coalesce(sum(e.partitions), 0)::integer
          FROM queen_proxy.extend_lease_part(queen_proxy.lease_databases(p_lease_id), p_lease_id, p_seconds,
                                             p_scope) AS e;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.extend_lease(uuid, integer, text) IS
  'Proxy: a lease extended on the shard databases its id names, answered as one database answers.';
