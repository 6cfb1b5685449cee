-- The SQL-level API inside the application's own transactions.
SET client_min_messages = warning;
\set VERBOSITY terse

CREATE TABLE app_orders (id int PRIMARY KEY, note text);

SELECT status, "offset" FROM queen.send('api_in', '{"order": 1}', 'lane-1', 'tx-1');
SELECT status, "offset" FROM queen.send('api_in', '{"order": 1, "again": true}', 'lane-1', 'tx-1');
SELECT status, "offset" FROM queen.send_batch('api_in', ARRAY['{"order": 2}', '{"order": 3}']::jsonb[], 'lane-1');

-- stage: claim, write the application's own row, ack, push to the next stage: one commit
BEGIN;
SELECT partition_id, partition, "offset", transaction_id, payload, lease_id IS NOT NULL AS leased
  FROM queen.claim('api_in', 'workers', 1) \gset c_
INSERT INTO app_orders VALUES ((:'c_payload'::jsonb->>'order')::int, 'processed');
SELECT success, lease_released FROM queen.ack_message(:c_partition_id, :c_offset, 'workers');
SELECT status FROM queen.send('api_out', :'c_payload'::jsonb, 'lane-1', 'out-' || :'c_transaction_id');
COMMIT;
SELECT * FROM app_orders;
SELECT queue, "offset", payload FROM queen.messages WHERE queue = 'api_out';

-- the same stage rolled back: nothing of it happened, the message is claimable again
BEGIN;
SELECT partition_id, "offset", payload FROM queen.claim('api_in', 'workers', 1) \gset c_
INSERT INTO app_orders VALUES ((:'c_payload'::jsonb->>'order')::int, 'processed');
SELECT success FROM queen.ack_message(:c_partition_id, :c_offset, 'workers');
SELECT status FROM queen.send('api_out', :'c_payload'::jsonb, 'lane-1', 'out-2');
ROLLBACK;
SELECT count(*) AS app_rows FROM app_orders;
SELECT count(*) AS out_messages FROM queen.messages WHERE queue = 'api_out';
SELECT "offset", payload FROM queen.claim('api_in', 'workers', 5);

-- nack and retry from SQL, and the answers for acks that do not apply
SELECT success, error FROM queen.ack_message(:c_partition_id, 3, 'workers', 'retry');
SELECT success, error FROM queen.ack_message(:c_partition_id, 3, 'workers', 'completed');
SELECT "offset" FROM queen.claim('api_in', 'workers', 5);
SELECT success, noop FROM queen.ack_message(:c_partition_id, 3, 'workers');
SELECT success, noop, error FROM queen.ack_message(:c_partition_id, 2, 'workers', 'failed');
SELECT * FROM queen.ack_message(:c_partition_id, 3, 'workers', 'maybe');

-- auto-ack claims commit the cursor at once
SELECT "offset", payload FROM queen.claim('api_in', 'auditors', 10, 'lane-1', true);
SELECT count(*) FROM queen.claim('api_in', 'auditors', 10, 'lane-1', true);
