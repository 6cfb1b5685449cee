-- Limits per tenant (docs/tenancy.md, "Limits per tenant").
-- queen.tenant_max_queues(): the session's queue limit per tenant, from the setting
--   queen.tenant_max_queues that the broker puts on its request connections
--   (QUEEN_TENANT_MAX_QUEUES); 0 (no limit) where it is not set, as in psql.
-- queen.check_tenant_queue_limit(): trigger: refuses (QN429) a new queue whose tenant already
--   has that many; tenants are counted under a per-tenant advisory lock, so two concurrent
--   creations cannot both take the last place. A queue that exists already passes (its
--   INSERT … ON CONFLICT stores nothing).
-- queen.tenant_usage(want bytes): per tenant ('' for the queues without one) its queues,
--   counted now, and the bytes of their segments in the newest stats snapshot. With want bytes
--   (a broker that enforces QUEEN_TENANT_MAX_BYTES), the snapshots count bytes for the next
--   ten minutes whichever broker refreshes them (queen.stored_bytes_wanted, read by
--   queen.refresh_stats).

CREATE OR REPLACE FUNCTION queen.tenant_max_queues()
RETURNS bigint
LANGUAGE sql STABLE
AS $$ SELECT coalesce(nullif(current_setting('queen.tenant_max_queues', true), ''), '0')::bigint $$;
COMMENT ON FUNCTION queen.tenant_max_queues() IS
  'Queues a tenant may have in this session (setting queen.tenant_max_queues), 0 for no limit.';

CREATE OR REPLACE FUNCTION queen.check_tenant_queue_limit()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_limit  bigint := queen.tenant_max_queues();
    v_tenant text;
    v_count  bigint;
BEGIN
    IF v_limit <= 0 OR EXISTS (SELECT 1 FROM queen.queues q WHERE q.name = NEW.name) THEN
        RETURN NEW;
    END IF;
    v_tenant := queen.queue_key_tenant(NEW.name);
    PERFORM pg_advisory_xact_lock(queen.queue_advisory_key(x'544e'::integer, coalesce(v_tenant, '')));
    IF v_tenant IS NULL THEN
        SELECT count(*) INTO v_count FROM queen.queues q WHERE q.tenant IS NULL;
    ELSE
        SELECT count(*) INTO v_count FROM queen.queues q WHERE q.tenant = v_tenant;
    END IF;
    IF v_count >= v_limit THEN
        RAISE EXCEPTION 'tenant queue limit reached: the tenant has % queues, QUEEN_TENANT_MAX_QUEUES is %',
            v_count, v_limit USING ERRCODE = 'QN429';
    END IF;
    RETURN NEW;
END;
$$;
COMMENT ON FUNCTION queen.check_tenant_queue_limit() IS
  'Trigger: refuses (QN429) a new queue past the session''s queen.tenant_max_queues for its tenant.';

CREATE OR REPLACE TRIGGER queues_tenant_limit
    BEFORE INSERT ON queen.queues
    FOR EACH ROW EXECUTE FUNCTION queen.check_tenant_queue_limit();

DROP FUNCTION IF EXISTS queen.tenant_usage();  -- it gained p_want_bytes
CREATE OR REPLACE FUNCTION queen.tenant_usage(p_want_bytes boolean DEFAULT false)
RETURNS TABLE(tenant text, queues bigint, stored_bytes bigint)
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_want_bytes THEN
        -- Rewritten at most once a minute, however many brokers ask.
        INSERT INTO queen.stored_bytes_wanted AS w (until) VALUES (now() + interval '10 minutes')
        ON CONFLICT (id) DO UPDATE SET until = excluded.until WHERE w.until < excluded.until - interval '1 minute';
    END IF;
    RETURN QUERY
        SELECT coalesce(q.tenant, ''), count(*), coalesce(sum(b.bytes), 0)::bigint
          FROM queen.queues q
          LEFT JOIN LATERAL (SELECT sum(s.stored_bytes) AS bytes FROM queen.queue_stats s
                              WHERE s.snapshot_id = queen.stats_snapshot_id() AND s.queue_id = q.id) b ON true
         GROUP BY 1
         ORDER BY 1;
END;
$$;
COMMENT ON FUNCTION queen.tenant_usage(boolean) IS
  'Per tenant ('''' for none): its queues now and its segments'' bytes in the newest stats snapshot.';

-- queen.tenant_queue_names(): every queue's tenant ('' for none) and stored key, so a proxy
-- can count a tenant's queues once however many shards hold them.
CREATE OR REPLACE FUNCTION queen.tenant_queue_names()
RETURNS TABLE(tenant text, queue_name text)
LANGUAGE sql STABLE
AS $$ SELECT coalesce(q.tenant, ''), q.name FROM queen.queues q $$;
COMMENT ON FUNCTION queen.tenant_queue_names() IS
  'Each queue''s tenant ('''' for none) and stored key (the shard proxy''s tenant_usage).';
