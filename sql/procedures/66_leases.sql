-- Lease renewal (docs/http-api.md, POST /api/v1/lease/:leaseId/extend).
-- queen.extend_lease(lease id, seconds) -> one row (status, expires_at, partitions)
--   Extends every live lease with that id — one pop's lease covers every partition it
--   claimed, whatever its group — to greatest(current expiry, now() + seconds). A shorter
--   extension never shortens a lease.
--   status 'extended': at least one cursor holds the lease and it is live; expires_at is
--     the earliest expiry among the extended cursors after the call (when the consumer must
--     renew again; one pop's cursors share their expiry), partitions how many were extended.
--   status 'expired': cursors still carry the id but its expiry has passed (no pop has
--     taken the span over yet); nothing changes, expires_at is NULL.
--   status 'not_found': no cursor carries the id (never issued, acked to its end,
--     released, taken over by a later pop, or moved by group administration).
--   seconds must be at least 1 (else SQLSTATE 22023).
--   p_scope (sql/procedures/21_tenancy.sql): a lease held on another tenant's queue is
--   'not_found'.
-- Lock order: the lease's cursor rows FOR UPDATE in partition-id order (as ack does).

-- The scope is a new trailing parameter: drop the form without it where it is still installed.
DROP FUNCTION IF EXISTS queen.extend_lease(uuid, integer);

CREATE OR REPLACE FUNCTION queen.extend_lease(p_lease_id uuid, p_seconds integer, p_scope text DEFAULT NULL)
RETURNS TABLE(status text, expires_at timestamptz, partitions integer)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_held integer;
BEGIN
    IF p_seconds IS NULL OR p_seconds < 1 THEN
        RAISE EXCEPTION 'extend_lease: seconds must be at least 1' USING ERRCODE = '22023';
    END IF;
    p_lease_id := queen.scoped_lease_id(p_lease_id, p_scope);
    SELECT count(*) INTO v_held
      FROM (SELECT 1 FROM queen.log_consumers lc
             WHERE lc.lease_id = p_lease_id
             ORDER BY lc.partition_id
               FOR UPDATE) locked;
    expires_at := NULL;
    partitions := 0;
    IF v_held = 0 THEN
        status := 'not_found';
        RETURN NEXT;
        RETURN;
    END IF;
    WITH extended AS (
        UPDATE queen.log_consumers lc
           SET lease_expires_at = greatest(lc.lease_expires_at, now() + make_interval(secs => p_seconds))
         WHERE lc.lease_id = p_lease_id AND lc.lease_expires_at > now()
        RETURNING lc.lease_expires_at)
    SELECT count(*)::integer, min(e.lease_expires_at) INTO partitions, expires_at FROM extended e;
    status := CASE WHEN partitions > 0 THEN 'extended' ELSE 'expired' END;
    RETURN NEXT;
END;
$$;
COMMENT ON FUNCTION queen.extend_lease(uuid, integer, text) IS
  'Extends every live cursor lease with this id to greatest(expiry, now() + seconds).';

-- queen.extend_lease_part(shards, …queen.extend_lease's arguments): queen.extend_lease on
-- this database; p_shards (the logical shards the proxy sent here) only routes the call.
CREATE OR REPLACE FUNCTION queen.extend_lease_part(p_shards integer[], p_lease_id uuid, p_seconds integer,
                                                   p_scope text DEFAULT NULL)
RETURNS TABLE(status text, expires_at timestamptz, partitions integer)
LANGUAGE sql
AS $$ SELECT * FROM queen.extend_lease(p_lease_id, p_seconds, p_scope) $$;
COMMENT ON FUNCTION queen.extend_lease_part(integer[], uuid, integer, text) IS
  'queen.extend_lease on this shard (the proxy''s call routed by the shards a lease id names).';
