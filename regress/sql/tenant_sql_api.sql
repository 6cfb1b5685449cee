-- The SQL-level API with a tenant (80_sql_api.sql, 98_streams_sql_api.sql: the trailing
-- p_tenant), the queue limit per tenant (69_tenant_limits.sql: the setting
-- queen.tenant_max_queues and its trigger) and the stored bytes per tenant of the stats
-- snapshot (queen.tenant_usage).
SET client_min_messages = warning;
\set VERBOSITY terse

-- The same queue name for two tenants and the default one: three queues.
SELECT status, "offset" FROM queen.send('tsa_orders', '{"who": "acme"}', 'p', 'a1', NULL, 'acme');
SELECT status, "offset" FROM queen.send('tsa_orders', '{"who": "globex"}', 'p', 'g1', NULL, 'globex');
SELECT status, "offset" FROM queen.send('tsa_orders', '{"who": "default"}', 'p', 'd1', NULL, '');
SELECT status FROM queen.send_batch('tsa_orders', ARRAY['{"who": "acme", "n": 2}', '{"who": "acme", "n": 3}']::jsonb[],
                                    'p', NULL, 'acme');
-- Today's signatures still resolve: no tenant names a queue by its stored key.
SELECT status FROM queen.send(E'acme\x1ftsa_orders', '{"who": "acme", "n": 4}', 'p');
SELECT replace(name, E'\x1f', '|') AS stored_key, tenant,
       (SELECT count(*) FROM queen.messages m WHERE m.queue = q.name) AS messages
  FROM queen.queues q WHERE name LIKE '%tsa_orders' ORDER BY 1;

-- Each tenant claims only its own messages.
SELECT payload->>'who' AS who, "offset" FROM queen.claim('tsa_orders', 'g', 10, NULL, true, 'globex');
SELECT payload->>'who' AS who, payload->>'n' AS n FROM queen.claim('tsa_orders', 'g', 10, NULL, true, 'acme');
SELECT payload->>'who' AS who FROM queen.claim('tsa_orders', 'g', 10, NULL, true, '');

-- ack_message with a tenant answers another tenant's partition as unknown, and changes nothing.
SELECT partition_id AS globex_p, lease_id AS globex_lease
  FROM queen.claim('tsa_orders', '__QUEUE_MODE__', 1, NULL, false, 'globex') \gset
SELECT success, error IS NOT NULL AS has_error
  FROM queen.ack_message(:globex_p, 1, '__QUEUE_MODE__', 'completed', NULL, :'globex_lease', 'acme');
SELECT committed FROM queen.log_consumers
 WHERE partition_id = :globex_p AND consumer_group = '__QUEUE_MODE__' ORDER BY version DESC LIMIT 1;
SELECT success FROM queen.ack_message(:globex_p, 1, '__QUEUE_MODE__', 'completed', NULL, :'globex_lease', 'globex');
SELECT committed FROM queen.log_consumers
 WHERE partition_id = :globex_p AND consumer_group = '__QUEUE_MODE__' ORDER BY version DESC LIMIT 1;

-- Invalid tenants and names are refused with 22023.
SELECT queen.send('tsa_orders', '1', 'p', NULL, NULL, E'bad\ttenant');
SELECT queen.send(E'x\x1fy', '1', 'p', NULL, NULL, 'acme');

-- A stream query registered for a tenant keys its name and queues; its cycle pushes into the
-- tenant's sink.
SELECT query_id AS acme_query, fresh
  FROM queen.stream_register('tsa_stage', 'tsa_orders', 'tsa_sink', 'h1', false, 'acme') \gset
SELECT fresh FROM queen.stream_register('tsa_stage', 'tsa_orders', 'tsa_sink', 'h1', false, 'globex');
SELECT replace(name, E'\x1f', '|') AS query, replace(source_queue, E'\x1f', '|') AS source,
       replace(sink_queue, E'\x1f', '|') AS sink
  FROM queen.stream_queries WHERE name LIKE '%tsa_stage' ORDER BY 1;
SELECT partition_id AS acme_p FROM queen.claim('tsa_orders', 'stage', 1, NULL, false, 'acme') \gset
SELECT r->'success' AS success, jsonb_array_length(r->'push') AS pushed
  FROM queen.stream_commit(:'acme_query', :acme_p, 'stage', '[]', '[{"queue": "tsa_sink", "payload": 1}]', NULL,
                           true, 'acme') AS r;
-- Another tenant's query is unknown in its scope.
SELECT r->'success' AS success
  FROM queen.stream_commit(:'acme_query', :acme_p, 'stage', '[]', '[]', NULL, true, 'globex') AS r;
SELECT replace(queue, E'\x1f', '|') AS queue, count(*) FROM queen.messages WHERE queue LIKE '%tsa_sink' GROUP BY 1;

-- The queue limit: with queen.tenant_max_queues set (the broker sets it on its connections), a
-- tenant's new queue past it is refused with QN429 and stores nothing; its existing queues and
-- other tenants are not affected. Without the setting there is no limit.
SET queen.tenant_max_queues = 2;
SELECT count(*) AS acme_queues FROM queen.queues WHERE tenant = 'acme';
SELECT status FROM queen.send('tsa_third', '1', 'p', NULL, NULL, 'acme');
SELECT status FROM queen.send('tsa_orders', '{"who": "acme", "n": 5}', 'p', NULL, NULL, 'acme');
SELECT status FROM queen.send('tsa_second', '1', 'p', NULL, NULL, 'globex');
SELECT status FROM queen.send('tsa_third', '1', 'p', NULL, NULL, 'globex');
-- A drained spool record was answered already: queen.push_spooled creates its queue past it.
SELECT status FROM queen.push_spooled(ARRAY[E'acme\x1ftsa_spooled'], ARRAY['p'], ARRAY[1], ARRAY['s1'],
                                      ARRAY[NULL]::uuid[], ARRAY[NULL]::text[], ARRAY['1'], ARRAY[NULL]::timestamptz[]);
SHOW queen.tenant_max_queues;
SELECT tenant, count(*) FROM queen.queues WHERE name LIKE '%tsa_%' GROUP BY 1 ORDER BY 1 NULLS FIRST;
RESET queen.tenant_max_queues;
SELECT status FROM queen.send('tsa_third', '1', 'p', NULL, NULL, 'acme');

-- Stored bytes per tenant come from the stats snapshot, when it counts them.
CALL queen.refresh_stats(p_count_bytes => true) \gset
SELECT tenant, queues, stored_bytes > 0 AS stores_bytes
  FROM queen.tenant_usage() WHERE tenant IN ('acme', 'globex') ORDER BY 1;
SELECT (SELECT stored_bytes FROM queen.tenant_usage() WHERE tenant = 'acme')
       = (SELECT sum(pg_column_size(s.body)) FROM queen.log_segments s
            JOIN queen.log_partitions p ON p.id = s.partition_id
            JOIN queen.queues q ON q.id = p.queue_id WHERE q.tenant = 'acme') AS bytes_are_the_segments;

-- A snapshot that does not count them holds 0.
CALL queen.refresh_stats() \gset
SELECT tenant, stored_bytes FROM queen.tenant_usage() WHERE tenant IN ('acme', 'globex') ORDER BY 1;

SELECT count(*) AS deleted FROM (SELECT queen.delete_queue(name) FROM queen.queues WHERE name LIKE '%tsa_%') d;
DELETE FROM queen.stream_queries WHERE name LIKE '%tsa_stage';
