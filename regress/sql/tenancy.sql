-- Tenancy in SQL (sql/procedures/21_tenancy.sql, docs/tenancy.md): the stored key of a
-- tenant's queue and the tenant derived from it, the scope rule, and the calls that take a
-- scope answering another tenant's partitions and leases as unknown ones.
SET client_min_messages = warning;
\set VERBOSITY terse

SELECT queen.tenant_queue_key('orders') = 'orders' AS bare,
       queen.tenant_queue_key('orders', '') = 'orders' AS default_tenant,
       queen.tenant_queue_key('orders', 'acme') = E'acme\x1forders' AS keyed,
       queen.queue_local_name(E'acme\x1forders') AS local_name,
       queen.queue_local_name('orders') AS bare_local;

SELECT coalesce(scope, '(null)') AS scope, coalesce(queue_tenant, '(null)') AS queue_tenant,
       queen.in_tenant_scope(queue_tenant, scope) AS in_scope
  FROM (VALUES (NULL, NULL), (NULL, 'acme'), ('', NULL), ('', 'acme'), ('acme', NULL), ('acme', 'acme'),
               ('acme', 'globex')) AS v(scope, queue_tenant)
 ORDER BY 1 NULLS FIRST, 2 NULLS FIRST;

-- Two tenants and the default one with the same queue, partition and transaction names.
SELECT item, status FROM queen.push(
    ARRAY[queen.tenant_queue_key('ten_orders', 'acme'), queen.tenant_queue_key('ten_orders', 'globex'),
          'ten_orders'],
    ARRAY['p', 'p', 'p'], ARRAY[1, 1, 1], ARRAY['t1', 't1', 't1'], ARRAY[NULL, NULL, NULL]::uuid[],
    ARRAY[NULL, NULL, NULL]::text[], ARRAY['"a"', '"g"', '"d"']) ORDER BY item;
SELECT replace(name, E'\x1f', '|') AS stored_key, tenant FROM queen.queues WHERE name LIKE '%ten_orders' ORDER BY 1;
-- The generated column (migration 25) and queen.queue_key_tenant spell one rule: they agree.
SELECT count(*) AS disagreeing FROM queen.queues WHERE tenant IS DISTINCT FROM queen.queue_key_tenant(name);
SELECT replace(queue, E'\x1f', '|') AS queue, payload FROM queen.messages WHERE queue LIKE '%ten_orders' ORDER BY 1;

SELECT p.id AS acme_p FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
 WHERE q.name = E'acme\x1ften_orders' \gset
SELECT p.id AS globex_p FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
 WHERE q.name = E'globex\x1ften_orders' \gset
SELECT p.id AS default_p FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
 WHERE q.name = 'ten_orders' \gset

-- Partitions outside the scope become 0 (no partition); NULL keeps them all.
SELECT queen.scoped_partition_ids(ARRAY[:acme_p, :globex_p, :default_p]::bigint[], 'acme')
       = ARRAY[:acme_p, 0, 0]::bigint[] AS acme_sees_its_own,
       queen.scoped_partition_ids(ARRAY[:acme_p, :globex_p, :default_p]::bigint[], '')
       = ARRAY[0, 0, :default_p]::bigint[] AS default_sees_its_own,
       queen.scoped_partition_ids(ARRAY[:acme_p, :globex_p]::bigint[], NULL)
       = ARRAY[:acme_p, :globex_p]::bigint[] AS unscoped_sees_all;

-- globex's lease is not found by acme, and acme's transaction cannot ack or require it.
SELECT lease_id AS globex_lease
  FROM queen.pop(E'globex\x1ften_orders', 'p', '__QUEUE_MODE__', 1, 1, false, true, NULL) \gset
SELECT status, partitions FROM queen.extend_lease(:'globex_lease', 60, 'acme');
SELECT status, partitions FROM queen.extend_lease(:'globex_lease', 60, 'globex');
SELECT lease_id AS default_lease
  FROM queen.pop('ten_orders', 'p', '__QUEUE_MODE__', 1, 1, false, true, NULL) \gset
SELECT status AS acme_extends_the_default_tenants FROM queen.extend_lease(:'default_lease', 60, 'acme');
SELECT status AS the_default_tenant_extends_its_own FROM queen.extend_lease(:'default_lease', 60, '');
SELECT r->'success' AS success, r->'failure'->>'kind' AS kind, r->'ack'->0->>'error' AS ack_error
  FROM queen.transaction(ARRAY[]::text[], ARRAY[]::text[], ARRAY[]::integer[], ARRAY[]::text[], ARRAY[]::uuid[],
                         ARRAY[]::text[], ARRAY[]::text[],
                         ARRAY['__QUEUE_MODE__'], ARRAY[:globex_p]::bigint[], ARRAY['t1'], ARRAY[NULL]::bigint[],
                         ARRAY[:'globex_lease']::uuid[], ARRAY['completed'], ARRAY[NULL], NULL, 'acme') AS r;
SELECT r->'success' AS success, r->'failure'->>'kind' AS kind
  FROM queen.transaction(ARRAY[]::text[], ARRAY[]::text[], ARRAY[]::integer[], ARRAY[]::text[], ARRAY[]::uuid[],
                         ARRAY[]::text[], ARRAY[]::text[], ARRAY[]::text[], ARRAY[]::bigint[], ARRAY[]::text[],
                         ARRAY[]::bigint[], ARRAY[]::uuid[], ARRAY[]::text[], ARRAY[]::text[],
                         ARRAY[:'globex_lease']::uuid[], 'acme') AS r;
SELECT committed, lease_id IS NOT NULL AS leased FROM queen.log_consumers
 WHERE partition_id = :globex_p ORDER BY version DESC LIMIT 1;
SELECT r->'success' AS success
  FROM queen.transaction(ARRAY[]::text[], ARRAY[]::text[], ARRAY[]::integer[], ARRAY[]::text[], ARRAY[]::uuid[],
                         ARRAY[]::text[], ARRAY[]::text[],
                         ARRAY['__QUEUE_MODE__'], ARRAY[:globex_p]::bigint[], ARRAY['t1'], ARRAY[NULL]::bigint[],
                         ARRAY[:'globex_lease']::uuid[], ARRAY['completed'], ARRAY[NULL], NULL, 'globex') AS r;
SELECT committed FROM queen.log_consumers WHERE partition_id = :globex_p ORDER BY version DESC LIMIT 1;

-- A full queue's error names it as its tenant knows it.
SELECT queue_id > 0 AS configured FROM queen.configure(E'acme\x1ften_full', NULL, NULL, '{"maxSize": 1}');
SELECT status FROM queen.push(ARRAY[E'acme\x1ften_full'], ARRAY['p'], ARRAY[1], ARRAY['f1'], ARRAY[NULL]::uuid[],
                              ARRAY[NULL]::text[], ARRAY['1']);
SELECT status FROM queen.push(ARRAY[E'acme\x1ften_full'], ARRAY['p'], ARRAY[1], ARRAY['f2'], ARRAY[NULL]::uuid[],
                              ARRAY[NULL]::text[], ARRAY['2']);

SELECT count(*) AS deleted FROM (SELECT queen.delete_queue(name) FROM queen.queues
                                  WHERE name LIKE '%ten_orders' OR name LIKE '%ten_full') d;
