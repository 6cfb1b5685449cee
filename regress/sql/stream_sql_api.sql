-- The SQL-level API of streams (sql/procedures/98_streams_sql_api.sql, docs/sql-api.md): a
-- stream stage run from SQL with queen.stream_register, queen.stream_state_get and
-- queen.stream_commit, inside the application's own transaction, and the queen.stream_states view.
SET client_min_messages = warning;
\set VERBOSITY terse

SELECT queue_id > 0 AS created FROM queen.configure('sa_src', NULL, NULL, '{"leaseTime": 300}');
SELECT status, "offset" FROM queen.send_batch('sa_src', ARRAY['{"n": 1}', '{"n": 2}', '{"n": 3}']::jsonb[], 'lane');
SELECT query_id AS qid FROM queen.stream_register('sa_query', 'sa_src', 'sa_sink', 'h1') \gset
SELECT fresh, reset, conflict FROM queen.stream_register('sa_query', 'sa_src', 'sa_sink', 'h1');
SELECT fresh, reset, conflict FROM queen.stream_register('sa_query', 'sa_src', 'sa_sink', 'h2');

-- claim, sum into state, push the sum with a derived id, ack: one cycle in the application's transaction
BEGIN;
SELECT partition_id AS pid, (array_agg(transaction_id ORDER BY "offset" DESC))[1] AS last_tx, min(lease_id::text) AS lease, sum((payload->>'n')::int) AS total
  FROM queen.claim('sa_src', 'streams.sa_query', 3) GROUP BY partition_id \gset
SELECT (r->>'success')::boolean AS success, r->'state_ops_applied' AS ops,
       jsonb_path_query_array(r->'push', '$[*].item') AS items, jsonb_path_query_array(r->'push', '$[*].status') AS statuses,
       r->'ack'->'lease_released' AS released, r->'ack'->'offset' AS acked
  FROM queen.stream_commit(:'qid', :pid, 'streams.sa_query',
           jsonb_build_array(jsonb_build_object('type', 'upsert', 'key', 'total', 'value', jsonb_build_object('sum', :total, 'windowEnd', 10))),
           jsonb_build_array(jsonb_build_object('queue', 'sa_sink', 'payload', jsonb_build_object('sum', :total)),
                             jsonb_build_object('queue', 'sa_other', 'partition', 'x', 'payload', 1, 'transactionId', 'fixed'),
                             jsonb_build_object('queue', 'sa_sink', 'payload', 'second')),
           jsonb_build_object('transactionId', :'last_tx', 'leaseId', :'lease')) r;
COMMIT;
SELECT query, source_queue, partition, key, value FROM queen.stream_states WHERE query = 'sa_query';
SELECT key, value FROM queen.stream_state_get(:'qid', :pid, p_ripe_at_or_before => 10);
SELECT queue, partition, "offset", payload FROM queen.messages WHERE queue IN ('sa_sink', 'sa_other') ORDER BY 1, 2, 3;
SELECT committed, lease_id IS NULL AS released FROM queen.log_consumers WHERE consumer_group = 'streams.sa_query' ORDER BY partition_id;

-- the same cycle again (an answer lost): the ack is a noop, so nothing of it is applied
SELECT (r->>'success')::boolean AS success, (r->>'applied')::boolean AS applied,
       jsonb_path_query_array(r->'push', '$[*].status') AS statuses, r->'ack'->'noop' AS noop
  FROM queen.stream_commit(:'qid', :pid, 'streams.sa_query', '[]',
           jsonb_build_array(jsonb_build_object('queue', 'sa_sink', 'payload', jsonb_build_object('sum', :total)),
                             jsonb_build_object('queue', 'sa_other', 'partition', 'x', 'payload', 1, 'transactionId', 'fixed'),
                             jsonb_build_object('queue', 'sa_sink', 'payload', 'second')),
           jsonb_build_object('transactionId', :'last_tx')) r;
SELECT count(*) AS sink_messages FROM queen.messages WHERE queue = 'sa_sink';

-- a failing cycle changes nothing, and the application's rollback undoes a committed one
SELECT r->>'success' AS success, r->>'error' AS error
  FROM queen.stream_commit(:'qid', :pid, 'streams.sa_query',
           '[{"type": "upsert", "key": "total", "value": 0}, {"type": "merge", "key": "x"}]') r;
BEGIN;
SELECT r->>'success' AS success FROM queen.stream_commit(:'qid', :pid, 'streams.sa_query', '[{"type": "delete", "key": "total"}]') r;
ROLLBACK;
SELECT key, value FROM queen.stream_states WHERE query = 'sa_query';

-- parts of the wrong shape are refused before anything runs
SELECT queen.stream_commit(:'qid', :pid, 'g', '{}');
SELECT queen.stream_commit(:'qid', :pid, 'g', '[]', '[{"payload": 1}]');
SELECT queen.stream_commit(:'qid', :pid, 'g', '[]', '[]', '{"transactionId": "x", "status": "maybe"}');

-- housekeeping keeps a partition that holds stream state, and reclaims it once the query is reset
SELECT queue_id > 0 AS created FROM queen.configure('sa_idle', NULL, NULL, NULL);
SELECT query_id AS idle_qid FROM queen.stream_register('sa_idle_query', 'sa_idle', NULL, 'h1') \gset
SELECT p.id AS idle_pid FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'sa_idle' \gset
SELECT r->>'success' AS success FROM queen.stream_commit(:'idle_qid', :idle_pid, 'g', '[{"type": "upsert", "key": "open-window", "value": 1}]') r;
UPDATE queen.log_partitions SET created_at = now() - interval '1 day' WHERE id = :idle_pid;
SELECT queen.reclaim_idle_partitions(60, 100000) >= 0 AS ran;
SELECT count(*) AS partition_kept FROM queen.log_partitions WHERE id = :idle_pid;
SELECT reset FROM queen.stream_register('sa_idle_query', 'sa_idle', NULL, 'h2', true);
SELECT queen.reclaim_idle_partitions(60, 100000) >= 1 AS reclaimed;
SELECT count(*) AS partition_left FROM queen.log_partitions WHERE id = :idle_pid;

-- deleting the source queue deletes the stream state of its partitions
SELECT queen.delete_queue('sa_src');
SELECT count(*) AS state_rows FROM queen.stream_state WHERE query_id = :'qid';
SELECT count(*) AS lanes FROM queen.stream_lanes WHERE query_id = :'qid';

-- the suites after this one count every queue's and query's rows
SELECT count(*) AS deleted FROM (SELECT queen.delete_queue(n) FROM unnest(ARRAY['sa_sink', 'sa_other', 'sa_idle']) n) x;
DELETE FROM queen.stream_queries WHERE name IN ('sa_query', 'sa_idle_query');
