-- Maintenance flags and the spool drain from SQL (sql/procedures/78_maintenance.sql,
-- 79_spool_drain.sql): reading and setting the flags (NULL keeps a flag), the database
-- identity, and queen.push_spooled probing in-doubt items even where dedup is off.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT push_maintenance, pop_maintenance, database_id IS NOT NULL AS has_identity FROM queen.get_maintenance();
SELECT push_maintenance, pop_maintenance FROM queen.set_maintenance(true, NULL);
SELECT push_maintenance, pop_maintenance FROM queen.set_maintenance(NULL, true);
SELECT push_maintenance, pop_maintenance FROM queen.set_maintenance(false, NULL);
SELECT push_maintenance, pop_maintenance FROM queen.get_maintenance();
SELECT push_maintenance, pop_maintenance FROM queen.set_maintenance(NULL, false);
-- the identity never changes with the flags; one row only
SELECT count(*) AS rows, count(DISTINCT database_id) AS identities FROM queen.maintenance_settings;

-- push_spooled: a queue with dedup off, one message stored already
SELECT queue_id IS NOT NULL AS configured FROM queen.configure('spq', NULL, NULL, '{"dedupWindowSeconds": 0}');
SELECT item, status, msg_offset FROM queen.push(ARRAY['spq'], ARRAY['Default'], ARRAY[1], ARRAY['a'],
       ARRAY[NULL]::uuid[], ARRAY[NULL]::text[], ARRAY['1']);
-- in doubt (a probe time): 'a' is the stored original; 'b' is new; not in doubt: 'a' stored again
SELECT item, status, msg_offset FROM queen.push_spooled(ARRAY['spq'], ARRAY['Default'], ARRAY[3],
       ARRAY['a', 'b', 'a'], ARRAY[NULL, NULL, NULL]::uuid[], ARRAY[NULL, NULL, NULL]::text[],
       ARRAY['"x"', '"y"', '"z"'], ARRAY[now() - interval '1 hour', now() - interval '1 hour', NULL])
 ORDER BY item;
-- a replay of the same in-doubt batch stores nothing
SELECT item, status, msg_offset FROM queen.push_spooled(ARRAY['spq'], ARRAY['Default'], ARRAY[2],
       ARRAY['a', 'b'], ARRAY[NULL, NULL]::uuid[], ARRAY[NULL, NULL]::text[],
       ARRAY['"x"', '"y"'], ARRAY[now() - interval '1 hour', now() - interval '1 hour'])
 ORDER BY item;
-- several partitions, an unknown queue created on the way, items answered in input order
SELECT item, status, msg_offset FROM queen.push_spooled(ARRAY['spq', 'spq-new'], ARRAY['P2', 'Default'], ARRAY[2, 1],
       ARRAY['c', 'd', 'a'], ARRAY[NULL, NULL, NULL]::uuid[], ARRAY[NULL, NULL, NULL]::text[],
       ARRAY['1', '2', '3'], ARRAY[now() - interval '1 hour', NULL, now() - interval '1 hour'])
 ORDER BY item;
SELECT partition, "offset", transaction_id, payload FROM queen.messages WHERE queue IN ('spq', 'spq-new')
 ORDER BY queue, partition, "offset";
-- mismatched arrays are refused
SELECT * FROM queen.push_spooled(ARRAY['spq'], ARRAY['Default'], ARRAY[1], ARRAY['e'], ARRAY[NULL]::uuid[],
       ARRAY[NULL]::text[], ARRAY['1'], ARRAY[]::timestamptz[]);
-- leave the database as found for the suites after this one
SELECT queen.delete_queue('spq') IS NOT NULL AS deleted, queen.delete_queue('spq-new') IS NOT NULL AS deleted_new;
SELECT count(*) AS partitions_left FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
 WHERE q.name IN ('spq', 'spq-new');
