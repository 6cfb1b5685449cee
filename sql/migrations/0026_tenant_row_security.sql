-- Migration 26: row-level security by tenant (docs/tenancy.md, "A database role per tenant").
-- tenant_roles maps a database role to the tenant whose rows it may see ('' for the queues
-- without a tenant, as in the scope arguments of sql/procedures/21_tenancy.sql). A role listed
-- there sees only its tenant's queues and, through them, their partitions, segments, cursors,
-- dedup entries, tombstones, dead letters, traces, consumer groups, statistics, activity rows
-- and stream state. A role not listed is not restricted, and the tables' owner (the broker's
-- own role) bypasses row security as PostgreSQL's owners do.
CREATE TABLE queen.tenant_roles (
    role_name name PRIMARY KEY,
    tenant    text NOT NULL
);

-- Every role may read its own row of tenant_roles (and only it), so the policies below can
-- find a role's tenant without a grant to each tenant's role.
ALTER TABLE queen.tenant_roles ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_row ON queen.tenant_roles USING (role_name = current_user);
GRANT SELECT ON queen.tenant_roles TO PUBLIC;

-- The tenant scope of the current role, NULL when it is not a tenant's role.
CREATE FUNCTION queen.role_scope()
RETURNS text
LANGUAGE sql STABLE
AS $$ SELECT tenant FROM queen.tenant_roles WHERE role_name = current_user $$;

-- Whether the current role may see a row of a queue with this tenant (the rule of
-- queen.in_tenant_scope: NULL scope, '' for no tenant, else the tenant itself).
CREATE FUNCTION queen.role_sees_tenant(p_tenant text)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT s IS NULL OR (s = '' AND p_tenant IS NULL) OR coalesce(p_tenant = s, false)
      FROM (SELECT queen.role_scope() AS s) r
$$;

ALTER TABLE queen.queues ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON queen.queues USING (queen.role_sees_tenant(tenant));

-- Tables of a queue's rows: visible through the queue (the subquery is itself filtered).
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['log_partitions', 'log_consumers', 'dead_letters', 'claim_floors',
                             'queue_stats', 'group_stats'] LOOP
        EXECUTE format('ALTER TABLE queen.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_rows ON queen.%I USING (queue_id IN (SELECT id FROM queen.queues))', t);
    END LOOP;
    FOREACH t IN ARRAY ARRAY['log_segments', 'log_dedup', 'message_tombstones', 'message_traces',
                             'log_cursor_keys'] LOOP
        EXECUTE format('ALTER TABLE queen.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_rows ON queen.%I '
                       'USING (partition_id IN (SELECT id FROM queen.log_partitions))', t);
    END LOOP;
    -- Tables keyed by a queue's stored key: its tenant is in the key.
    FOREACH t IN ARRAY ARRAY['consumer_groups', 'queue_metrics', 'queue_parked_metrics', 'retention_history'] LOOP
        EXECUTE format('ALTER TABLE queen.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_rows ON queen.%I USING (queen.role_sees_tenant('
                       'CASE WHEN strpos(queue_name, E''\x1f'') > 0 THEN split_part(queue_name, E''\x1f'', 1) END))', t);
    END LOOP;
END
$$;

-- Stream queries are named by keys like queues; their lanes and state through them.
ALTER TABLE queen.stream_queries ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON queen.stream_queries
    USING (queen.role_sees_tenant(CASE WHEN strpos(name, E'\x1f') > 0 THEN split_part(name, E'\x1f', 1) END));
ALTER TABLE queen.stream_lanes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON queen.stream_lanes USING (query_id IN (SELECT id FROM queen.stream_queries));
ALTER TABLE queen.stream_state ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON queen.stream_state USING (query_id IN (SELECT id FROM queen.stream_queries));
