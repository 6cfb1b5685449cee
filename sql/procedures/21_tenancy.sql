-- Tenancy (docs/tenancy.md). A scope argument names which queues a call may touch:
--   NULL  every queue (tenancy off);
--   ''    the queues without a tenant (those of QUEEN_TENANCY_DEFAULT);
--   name  the queues of that tenant.
-- queen.tenant_queue_key(name, tenant): the stored key of a tenant's queue;
--   broker/domain/tenant_scope.cpp implements the same rule.
-- queen.queue_key_tenant(key): the tenant a stored key names, NULL for a bare name (the rule
--   of the generated column queen.queues.tenant, migration 25), for tables that hold keys.
-- queen.queue_local_name(key): the name a queue's tenant knows it by (the key without its
--   tenant), for the texts a tenant reads.
-- queen.scoped_queue_name(key, scope): a queue's name as a call in that scope shows it: the
--   stored key without a scope, else the name its tenant knows.
-- queen.in_tenant_scope(queue tenant, scope): whether a queue with that tenant is in scope.
-- queen.partition_in_scope(partition id, scope): whether that partition's queue is.
-- queen.scoped_partition_ids(ids, scope): the ids, with each partition outside the scope
--   replaced by 0, which names no partition, so a call answers it as unknown.
-- queen.scoped_partition_id(id, scope): one partition id the same way, for the calls that take
--   a single one (a message's detail, deletion and traces).
-- queen.scoped_stream_query_id(query id, scope): the id of a stream query in the scope (its
--   name is a key like a queue's), else the nil UUID, which names no query.
-- queen.sql_api_queue_key(name, tenant): the stored key of a queue named in the SQL-level API
--   (80_sql_api.sql) for a tenant (NULL: the name is the key, as with tenancy off; '': the
--   default tenant's queues, stored under bare names); raises 22023 for an invalid tenant name,
--   or a name holding U+001F while a tenant is given.
-- queen.scoped_lease_id(lease id, scope): the lease id, or NULL when a cursor holding it
--   belongs to a queue outside the scope.

CREATE OR REPLACE FUNCTION queen.tenant_queue_key(p_name text, p_tenant text DEFAULT NULL)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN p_tenant IS NULL OR p_tenant = '' THEN p_name ELSE p_tenant || E'\x1f' || p_name END $$;
COMMENT ON FUNCTION queen.tenant_queue_key(text, text) IS
  'The stored key of a tenant''s queue: tenant, U+001F, name; the bare name without a tenant.';

CREATE OR REPLACE FUNCTION queen.queue_key_tenant(p_key text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN strpos(p_key, E'\x1f') > 0 THEN split_part(p_key, E'\x1f', 1) END $$;
COMMENT ON FUNCTION queen.queue_key_tenant(text) IS
  'The tenant a stored queue key names; NULL for a bare name.';

CREATE OR REPLACE FUNCTION queen.queue_local_name(p_key text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN strpos(p_key, E'\x1f') > 0 THEN substr(p_key, strpos(p_key, E'\x1f') + 1) ELSE p_key END $$;
COMMENT ON FUNCTION queen.queue_local_name(text) IS
  'The name a queue''s tenant knows it by: the stored key without its tenant.';

CREATE OR REPLACE FUNCTION queen.scoped_queue_name(p_key text, p_scope text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN p_scope IS NULL THEN p_key ELSE queen.queue_local_name(p_key) END $$;
COMMENT ON FUNCTION queen.scoped_queue_name(text, text) IS
  'A queue''s name as shown in a tenant scope: the stored key without a scope, else its local name.';

CREATE OR REPLACE FUNCTION queen.in_tenant_scope(p_queue_tenant text, p_scope text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT p_scope IS NULL OR (p_scope = '' AND p_queue_tenant IS NULL) OR coalesce(p_queue_tenant = p_scope, false) $$;
COMMENT ON FUNCTION queen.in_tenant_scope(text, text) IS
  'Whether a queue of this tenant is in the scope (NULL: every queue; '''': those without a tenant).';

CREATE OR REPLACE FUNCTION queen.partition_in_scope(p_id bigint, p_scope text)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT p_scope IS NULL
        OR EXISTS (SELECT 1 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                    WHERE p.id = p_id AND queen.in_tenant_scope(q.tenant, p_scope))
$$;
COMMENT ON FUNCTION queen.partition_in_scope(bigint, text) IS
  'Whether the partition''s queue is in the tenant scope (NULL scope: always).';

CREATE OR REPLACE FUNCTION queen.scoped_partition_ids(p_ids bigint[], p_scope text)
RETURNS bigint[]
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p_scope IS NULL THEN p_ids ELSE
        (SELECT coalesce(array_agg(CASE WHEN queen.in_tenant_scope(q.tenant, p_scope) THEN i.id ELSE 0 END
                                   ORDER BY i.k), '{}')
           FROM unnest(p_ids) WITH ORDINALITY AS i(id, k)
           LEFT JOIN queen.log_partitions p ON p.id = i.id
           LEFT JOIN queen.queues q ON q.id = p.queue_id)
    END
$$;
COMMENT ON FUNCTION queen.scoped_partition_ids(bigint[], text) IS
  'The partition ids, each outside the tenant scope replaced by 0 (no partition).';

CREATE OR REPLACE FUNCTION queen.scoped_partition_id(p_id bigint, p_scope text)
RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN queen.partition_in_scope(p_id, p_scope) THEN p_id ELSE 0 END
$$;
COMMENT ON FUNCTION queen.scoped_partition_id(bigint, text) IS
  'The partition id, or 0 (no partition) when it is outside the tenant scope.';

CREATE OR REPLACE FUNCTION queen.scoped_lease_id(p_lease_id uuid, p_scope text)
RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p_scope IS NULL THEN p_lease_id
                WHEN EXISTS (SELECT 1 FROM queen.log_consumers lc
                               JOIN queen.queues q ON q.id = lc.queue_id
                              WHERE lc.lease_id = p_lease_id AND NOT queen.in_tenant_scope(q.tenant, p_scope))
                THEN NULL ELSE p_lease_id END
$$;
COMMENT ON FUNCTION queen.scoped_lease_id(uuid, text) IS
  'The lease id, or NULL when a cursor holding it is outside the tenant scope.';

CREATE OR REPLACE FUNCTION queen.scoped_stream_query_id(p_id uuid, p_scope text)
RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p_scope IS NULL
                  OR EXISTS (SELECT 1 FROM queen.stream_queries sq
                              WHERE sq.id = p_id AND queen.in_tenant_scope(queen.queue_key_tenant(sq.name), p_scope))
                THEN p_id ELSE '00000000-0000-0000-0000-000000000000'::uuid END
$$;
COMMENT ON FUNCTION queen.scoped_stream_query_id(uuid, text) IS
  'The stream query id, or the nil UUID (no query) when the query is outside the tenant scope.';

CREATE OR REPLACE FUNCTION queen.sql_api_queue_key(p_name text, p_tenant text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
    IF p_tenant IS NULL THEN
        RETURN p_name;
    END IF;
    IF octet_length(p_tenant) > 128 OR p_tenant ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'tenant must be at most 128 bytes without control characters' USING ERRCODE = '22023';
    END IF;
    IF strpos(p_name, E'\x1f') > 0 THEN
        RAISE EXCEPTION 'a queue name must not hold the character U+001F when a tenant is given'
            USING ERRCODE = '22023';
    END IF;
    RETURN queen.tenant_queue_key(p_name, p_tenant);
END;
$$;
COMMENT ON FUNCTION queen.sql_api_queue_key(text, text) IS
  'The stored key of a queue the SQL-level API names for a tenant (NULL: the name as it is).';

-- queen.scoped_partition_ids_part: queen.scoped_partition_ids over this shard's share of the
-- ids, each answered with its position in the whole call.
CREATE OR REPLACE FUNCTION queen.scoped_partition_ids_part(p_shards integer[], p_items integer[], p_ids bigint[],
                                                           p_scope text)
RETURNS TABLE(item integer, partition_id bigint)
LANGUAGE sql STABLE
AS $$
    SELECT p_items[u.i], u.id
      FROM unnest(queen.scoped_partition_ids(p_ids, p_scope)) WITH ORDINALITY AS u(id, i)
$$;
COMMENT ON FUNCTION queen.scoped_partition_ids_part(integer[], integer[], bigint[], text) IS
  'queen.scoped_partition_ids over one shard''s share of the ids; positions as in the whole call.';
