-- Row-level security by tenant (migration 26, docs/tenancy.md): two tenants' database roles,
-- each listed in queen.tenant_roles, see only their own queues and what hangs off them
-- (partitions, segments, cursors, dead letters, traces, consumer groups, stream state) and the
-- operator views over them; the default tenant's role sees the queues without a tenant; the
-- tables' owner sees everything.
SET client_min_messages = warning;
\set VERBOSITY terse

-- The same queue, partition and transaction names for t1, t2 and the default tenant.
SELECT count(*) AS stored FROM queen.push(
    ARRAY[queen.tenant_queue_key('rls_q', 't1'), queen.tenant_queue_key('rls_q', 't2'), 'rls_q'],
    ARRAY['p', 'p', 'p'], ARRAY[2, 1, 1], ARRAY['a', 'b', 'a', 'a'], ARRAY[NULL, NULL, NULL, NULL]::uuid[],
    ARRAY[NULL, NULL, NULL, NULL]::text[], ARRAY['"t1-a"', '"t1-b"', '"t2-a"', '"d-a"']);
-- Per tenant: a leased cursor, a dead letter, a trace and a registered group.
SELECT count(*) AS leased FROM (
    SELECT queen.pop(k, 'p', 'g', 1, 1, false, true, NULL)
      FROM unnest(ARRAY[queen.tenant_queue_key('rls_q', 't1'), queen.tenant_queue_key('rls_q', 't2'), 'rls_q']) k) x;

INSERT INTO queen.dead_letters (partition_id, queue_id, consumer_group, msg_offset, transaction_id, reason, error_message,
                                attempts)
SELECT p.id, p.queue_id, 'g', 1, 'a', 'dlq', 'error of ' || coalesce(q.tenant, 'default'), 0
  FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name LIKE '%rls_q';
SELECT count(*) AS traced FROM (
    SELECT queen.record_trace(p.id, 'a', NULL, NULL, jsonb_build_object('by', coalesce(q.tenant, 'default')), NULL)
      FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name LIKE '%rls_q') x;
SELECT count(*) AS registered FROM (
    SELECT queen.stream_register(queen.tenant_queue_key('rls_s', t), queen.tenant_queue_key('rls_q', t), NULL, 'h')
      FROM unnest(ARRAY['t1', 't2', '']) t) x;
INSERT INTO queen.stream_state (query_id, partition_id, key, version, value)
SELECT sq.id, p.id, 'k', nextval('queen.stream_state_version'), jsonb_build_object('by', sq.name)
  FROM queen.stream_queries sq
  JOIN queen.queues q ON q.name = sq.source_queue
  JOIN queen.log_partitions p ON p.queue_id = q.id
 WHERE sq.name LIKE '%rls_s';

CREATE ROLE rls_t1 NOLOGIN;
CREATE ROLE rls_t2 NOLOGIN;
CREATE ROLE rls_default NOLOGIN;
INSERT INTO queen.tenant_roles VALUES ('rls_t1', 't1'), ('rls_t2', 't2'), ('rls_default', '');
GRANT USAGE ON SCHEMA queen TO rls_t1, rls_t2, rls_default;
GRANT SELECT ON ALL TABLES IN SCHEMA queen TO rls_t1, rls_t2, rls_default;

-- What one role sees of each relation, its own rows named by tenant.
CREATE FUNCTION pg_temp.seen()
RETURNS TABLE(relation text, rows_seen text)
LANGUAGE sql AS $$
    SELECT 'queues', string_agg(coalesce(tenant, 'default'), ',' ORDER BY tenant) FROM queen.queues
     WHERE name LIKE '%rls_q'
    UNION ALL SELECT 'log_partitions', count(*)::text FROM queen.log_partitions p
     WHERE p.queue_id IN (SELECT id FROM queen.queues WHERE name LIKE '%rls_q')
    UNION ALL SELECT 'log_partitions (all named p)', count(*)::text FROM queen.log_partitions WHERE name = 'p'
    UNION ALL SELECT 'log_segments', count(*)::text FROM queen.log_segments s
     JOIN queen.log_partitions p ON p.id = s.partition_id WHERE p.name = 'p'
    UNION ALL SELECT 'log_consumers', string_agg(consumer_group || '@' || committed, ',') FROM queen.log_consumers c
     JOIN queen.log_partitions p ON p.id = c.partition_id WHERE p.name = 'p'
    UNION ALL SELECT 'log_dedup', count(*)::text FROM queen.log_dedup d
     JOIN queen.log_partitions p ON p.id = d.partition_id WHERE p.name = 'p'
    UNION ALL SELECT 'dead_letters', string_agg(error_message, ',') FROM queen.dead_letters WHERE consumer_group = 'g'
    UNION ALL SELECT 'message_traces', string_agg(data->>'by', ',') FROM queen.message_traces WHERE transaction_id = 'a'
    UNION ALL SELECT 'consumer_groups', string_agg(replace(queue_name, E'\x1f', '|'), ',') FROM queen.consumer_groups
     WHERE consumer_group = 'g'
    UNION ALL SELECT 'stream_queries', string_agg(replace(name, E'\x1f', '|'), ',') FROM queen.stream_queries
     WHERE name LIKE '%rls_s'
    UNION ALL SELECT 'stream_state', string_agg(replace(value->>'by', E'\x1f', '|'), ',') FROM queen.stream_state
     WHERE key = 'k'
    UNION ALL SELECT 'messages view', string_agg(coalesce(tenant, 'default') || ':' || queue_name || ':' || payload_text,
                                                  ',' ORDER BY tenant, "offset") FROM queen.messages
     WHERE queue_name = 'rls_q'
    UNION ALL SELECT 'consumer_lag view', string_agg(coalesce(tenant, 'default') || ':' || lag, ',') FROM queen.consumer_lag
     WHERE queue_name = 'rls_q' AND consumer_group = 'g'
    UNION ALL SELECT 'queue_depth view', string_agg(coalesce(tenant, 'default') || ':' || total, ',') FROM queen.queue_depth
     WHERE queue_name = 'rls_q'
    UNION ALL SELECT 'message_status view', count(*)::text FROM queen.message_status WHERE queue_name = 'rls_q'
    UNION ALL SELECT 'stream_states view', string_agg(coalesce(tenant, 'default'), ',') FROM queen.stream_states
     WHERE key = 'k'
$$;
GRANT EXECUTE ON FUNCTION pg_temp.seen() TO rls_t1, rls_t2, rls_default;

SELECT * FROM pg_temp.seen();
SET ROLE rls_t1;
SELECT * FROM pg_temp.seen();
-- Naming another tenant's rows finds nothing.
SELECT count(*) AS t2_queues FROM queen.queues WHERE tenant = 't2';
SELECT count(*) AS t2_messages FROM queen.messages WHERE tenant = 't2';
RESET ROLE;
SET ROLE rls_t2;
SELECT * FROM pg_temp.seen();
RESET ROLE;
SET ROLE rls_default;
SELECT * FROM pg_temp.seen();
RESET ROLE;

REVOKE ALL ON ALL TABLES IN SCHEMA queen FROM rls_t1, rls_t2, rls_default;
REVOKE USAGE ON SCHEMA queen FROM rls_t1, rls_t2, rls_default;
DROP FUNCTION pg_temp.seen();
DROP ROLE rls_t1;
DROP ROLE rls_t2;
DROP ROLE rls_default;
DELETE FROM queen.tenant_roles WHERE role_name IN ('rls_t1', 'rls_t2', 'rls_default');
DELETE FROM queen.stream_state WHERE key = 'k';
DELETE FROM queen.stream_queries WHERE name LIKE '%rls_s';
SELECT count(*) AS deleted FROM (SELECT queen.delete_queue(name) FROM queen.queues WHERE name LIKE '%rls_q') d;
