-- queen.transaction (pushes and acks in one transaction, all or nothing) and
-- queen.release_lease (a lease given back without an attempt): a flat checklist.
SET client_min_messages = warning;
\set VERBOSITY terse

SELECT queue_id > 0 AS created FROM queen.configure('tx_in', NULL, NULL, '{"retryDelay": 0}');
SELECT queue_id > 0 AS created FROM queen.configure('tx_out', NULL, NULL, NULL);
SELECT item, status, msg_offset
  FROM queen.push(ARRAY['tx_in'], ARRAY['k1'], ARRAY[2], ARRAY['in-1','in-2'],
                  ARRAY[NULL,NULL]::uuid[], ARRAY[NULL,NULL]::text[], ARRAY['1','2'])
 ORDER BY item;
SELECT id AS k1 FROM queen.log_partitions WHERE name = 'k1' \gset
SELECT lease_id AS lease FROM queen.pop('tx_in', 'k1', '__QUEUE_MODE__', 2, 1, false, true, NULL) \gset

-- the pipeline step: ack in-1 and push its result to the next stage, in one call
SELECT r->'success' AS success, r->'push'->0->>'status' AS push_status, r->'push'->0->>'offset' AS push_offset,
       r->'ack' AS ack
  FROM queen.transaction(ARRAY['tx_out'], ARRAY['k1'], ARRAY[1], ARRAY['out-1'], ARRAY[NULL]::uuid[],
                         ARRAY[NULL]::text[], ARRAY['"result-1"'],
                         ARRAY['__QUEUE_MODE__'], ARRAY[:k1]::bigint[], ARRAY['in-1'], ARRAY[NULL]::bigint[],
                         ARRAY[:'lease']::uuid[], ARRAY['completed'], ARRAY[NULL],
                         ARRAY[:'lease']::uuid[]) AS r;
SELECT queue, partition, "offset", transaction_id, payload FROM queen.messages WHERE queue = 'tx_out';
SELECT committed, lease_id IS NOT NULL AS leased FROM queen.log_consumers WHERE partition_id = :k1;

-- a failing ack (already committed) rolls the push back with it: nothing new in tx_out
SELECT r->'success' AS success, r->'failure'->>'kind' AS kind, r->'failure'->>'error' AS error
  FROM queen.transaction(ARRAY['tx_out'], ARRAY['k1'], ARRAY[1], ARRAY['out-2'], ARRAY[NULL]::uuid[],
                         ARRAY[NULL]::text[], ARRAY['"result-2"'],
                         ARRAY['__QUEUE_MODE__'], ARRAY[:k1]::bigint[], ARRAY['in-1'], ARRAY[1]::bigint[],
                         ARRAY[:'lease']::uuid[], ARRAY['failed'], ARRAY['late'], NULL) AS r;
SELECT count(*) AS out_messages FROM queen.messages WHERE queue = 'tx_out';

-- a duplicate push item and a noop ack are not failures
SELECT r->'success' AS success, r->'push'->0->>'status' AS push_status, r->'ack'->0->>'noop' AS noop
  FROM queen.transaction(ARRAY['tx_out'], ARRAY['k1'], ARRAY[1], ARRAY['out-1'], ARRAY[NULL]::uuid[],
                         ARRAY[NULL]::text[], ARRAY['"again"'],
                         ARRAY['__QUEUE_MODE__'], ARRAY[:k1]::bigint[], ARRAY['in-1'], ARRAY[1]::bigint[],
                         ARRAY[NULL]::uuid[], ARRAY['completed'], ARRAY[NULL], NULL) AS r;
SELECT count(*) AS out_messages FROM queen.messages WHERE queue = 'tx_out';

-- release_lease: the lease goes, no attempt is counted, the span is claimable again at once
SELECT queen.release_lease(:'lease', '__QUEUE_MODE__') AS released;
SELECT committed, lease_id IS NULL AS free, attempts FROM queen.log_consumers WHERE partition_id = :k1;
SELECT queen.release_lease(:'lease', '__QUEUE_MODE__') AS released_again;
SELECT span_start, span_end FROM queen.pop('tx_in', 'k1', '__QUEUE_MODE__', 10, 1, false, true, NULL)
 WHERE lease_id IS NOT NULL;
-- another group's lease is not released by this group's name
SELECT lease_id AS audit_lease FROM queen.pop('tx_in', 'k1', 'audit', 10, 1, false, true, NULL)
 WHERE lease_id IS NOT NULL \gset
SELECT queen.release_lease(:'audit_lease', '__QUEUE_MODE__') AS released_by_another_group;
SELECT queen.release_lease(:'audit_lease', 'audit') AS released_by_its_group;

-- a required lease that is not held fails the whole call
SELECT r->'success' AS success, r->'failure'->>'kind' AS kind
  FROM queen.transaction(ARRAY['tx_out'], ARRAY['k1'], ARRAY[1], ARRAY['out-3'], ARRAY[NULL]::uuid[],
                         ARRAY[NULL]::text[], ARRAY['3'],
                         ARRAY[]::text[], ARRAY[]::bigint[], ARRAY[]::text[], ARRAY[]::bigint[],
                         ARRAY[]::uuid[], ARRAY[]::text[], ARRAY[]::text[],
                         ARRAY[:'audit_lease']::uuid[]) AS r;
SELECT count(*) AS out_messages FROM queen.messages WHERE queue = 'tx_out';
