-- The proxy's hand-written queue configuration (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/35_configure.sql).
-- QUEEN_TENANT_MAX_QUEUES over shards (docs/scaling.md). The broker sets the limit on its
-- request connections (the setting queen.tenant_max_queues), which reach the proxy but not the
-- shards PL/Proxy connects to; and a queue lives on the shards its partitions went to, so no
-- shard sees all of a tenant's queues. So while a limit is set, the proxy records every queue
-- name a request may create in the first logical shard's database (queen.catalog_queues, its
-- catalog of queues) before the request runs there, and the limit is applied to that count.

-- queen_proxy.check_queue_limit(names, exempt): with a limit on this session, records `names`
-- in the catalog; QN429 when a new one is past its tenant's limit (nothing recorded then for
-- it). exempt: recorded without the limit (a spool drain: its pushes were already answered).
CREATE OR REPLACE FUNCTION queen_proxy.check_queue_limit(p_names text[], p_exempt boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_limit bigint := coalesce(nullif(current_setting('queen.tenant_max_queues', true), ''), '0')::bigint;
BEGIN
    IF v_limit > 0 AND coalesce(cardinality(p_names), 0) > 0 THEN
        PERFORM queen_proxy.catalog_queues(p_names, CASE WHEN p_exempt THEN 0 ELSE v_limit END);
    END IF;
END;
$$;
COMMENT ON FUNCTION queen_proxy.check_queue_limit IS
  'With a limit on this session, records the names in the catalog shard; QN429 when a new one is past its tenant''s limit.';

-- queen.configure: the queue's configuration on every shard (the answer of the shard that holds
-- its Default partition), after the limit's check.
CREATE OR REPLACE FUNCTION queen.configure(p_name text, p_namespace text, p_task text, p_options jsonb)
RETURNS TABLE(queue_id bigint, partition_id bigint, options jsonb)
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM queen_proxy.check_queue_limit(ARRAY[p_name]);
    RETURN QUERY SELECT c.queue_id, c.partition_id, c.options
                   FROM queen_proxy.configure_every(p_name, p_namespace, p_task, p_options) c
                  ORDER BY c.partition_id
                  LIMIT 1;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.configure IS
  'Proxy: the queue''s configuration on every shard (the answer of the shard that holds its Default partition), after the limit''s check.';
