-- The push / pop / ack procedures called from SQL: a flat checklist.
SET client_min_messages = warning;
\set VERBOSITY terse

-- a queue whose failed messages come back at once
SELECT queue_id > 0 AS created, options->>'retryDelay' AS retry_delay FROM queen.configure('orders', NULL, NULL, '{"retryDelay": 0}');

-- push: p1 gets 'a','b'; p2 gets 'c' and an intra-batch duplicate of 'c'
SELECT item, status, msg_offset, created_at IS NOT NULL AS has_time
  FROM queen.push(ARRAY['orders','orders'], ARRAY['p1','p2'], ARRAY[2,2],
                  ARRAY['a','b','c','c'], ARRAY[NULL,NULL,NULL,NULL]::uuid[],
                  ARRAY[NULL,NULL,NULL,NULL]::text[], ARRAY['1','{"x":2}','"three"','"dup"'])
 ORDER BY item;

-- push again: 'a' is a duplicate of offset 1 of p1, 'd' is new
SELECT item, status, msg_offset
  FROM queen.push(ARRAY['orders'], ARRAY['p1'], ARRAY[2], ARRAY['a','d'],
                  ARRAY[NULL,NULL]::uuid[], ARRAY[NULL,NULL]::text[], ARRAY['"again"','4'])
 ORDER BY item;

-- what is stored, decoded by plain SQL
SELECT queue, partition, "offset", transaction_id, payload, codec FROM queen.messages ORDER BY partition, "offset";
SELECT p.name, s.first_offset, s.last_offset, s.codec FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id ORDER BY p.name, s.first_offset;
SELECT name, queen.partition_last_offset(id) AS last_offset FROM queen.log_partitions ORDER BY name;

SELECT id AS p1 FROM queen.log_partitions WHERE name = 'p1' \gset

-- message ids are derived from (partition, offset)
SELECT queen.message_id(1, 2);
SELECT queen.message_id_partition(queen.message_id(7, 9)), queen.message_id_offset(queen.message_id(7, 9));
SELECT "offset", payload FROM queen.message(queen.message_id(:p1, 3));

-- pop: queue mode, partition p1, batch 2 -> span (0, 2]
SELECT partition_name, span_start, span_end, seg_first, lease_id IS NOT NULL AS leased
  FROM queen.pop('orders', 'p1', '__QUEUE_MODE__', 2, 1, false, true, NULL);
-- the partition is leased: nothing more for this group
SELECT count(*) FROM queen.pop('orders', 'p1', '__QUEUE_MODE__', 2, 1, false, true, NULL);
-- another group gets it independently
SELECT partition_name, span_start, span_end
  FROM queen.pop('orders', 'p1', 'audit', 10, 1, true, true, NULL);

-- ack by transaction id: 'a' (offset 1) completes; 'd' (offset 3) is outside the span (0, 2]
SELECT item, success, msg_offset, noop, dlq, lease_released, error
  FROM queen.ack('__QUEUE_MODE__', ARRAY[:p1,:p1]::bigint[], ARRAY['a','d'], ARRAY[NULL,NULL]::bigint[],
                 ARRAY[NULL,NULL]::uuid[], ARRAY['completed','completed'], ARRAY[NULL,NULL])
 ORDER BY item;
-- 'b' (offset 2) fails: one attempt for head 2, lease released, redelivery from 2
SELECT item, success, msg_offset, lease_released, error
  FROM queen.ack('__QUEUE_MODE__', ARRAY[:p1]::bigint[], ARRAY['b'], ARRAY[NULL]::bigint[],
                 ARRAY[NULL]::uuid[], ARRAY['failed'], ARRAY['boom']);
SELECT p.name, consumer_group, committed, lease_id IS NULL AS free, attempts, attempts_offset
  FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id ORDER BY p.name, consumer_group;

-- redelivery from 2 (the counts row: offset 2 is handed out again); dead-letter offset 2 and complete offset 3 (by explicit offsets)
SELECT span_start, span_end, redelivered FROM queen.pop('orders', 'p1', '__QUEUE_MODE__', 10, 1, false, true, NULL);
SELECT item, success, msg_offset, dlq, lease_released, error
  FROM queen.ack('__QUEUE_MODE__', ARRAY[:p1,:p1]::bigint[], ARRAY['b','d'], ARRAY[2,3]::bigint[],
                 ARRAY[NULL,NULL]::uuid[], ARRAY['dlq','completed'], ARRAY['bad','x'])
 ORDER BY item;
SELECT consumer_group, msg_offset, transaction_id, payload, error_message, attempts, reason FROM queen.dead_letters;
SELECT committed, lease_id IS NULL AS free, attempts FROM queen.log_consumers WHERE partition_id = :p1 AND consumer_group = '__QUEUE_MODE__';
-- acks at or below the cursor: noop for completed, 'already committed' for a nack
SELECT item, success, noop, error
  FROM queen.ack('__QUEUE_MODE__', ARRAY[:p1,:p1]::bigint[], ARRAY['a','a'], ARRAY[NULL,NULL]::bigint[],
                 ARRAY[NULL,NULL]::uuid[], ARRAY['completed','failed'], ARRAY[NULL,NULL])
 ORDER BY item;

-- configure replaces the option set and echoes it
SELECT queue_id > 0 AS created, options->>'leaseTime' AS lease, options->>'retryLimit' AS retries
  FROM queen.configure('orders', NULL, NULL, '{"leaseTime": 5}');
SELECT options->>'leaseTime' AS lease FROM queen.configure('orders', NULL, NULL, '{}');

-- bad calls are refused with a clear error
SELECT * FROM queen.push(ARRAY['q'], ARRAY['p'], ARRAY[2], ARRAY['a'], ARRAY[NULL]::uuid[], ARRAY[NULL]::text[], ARRAY['1']);
SELECT * FROM queen.pop('orders', NULL, 'g', 0, 1, false, true, NULL);
-- a bad element is named and nothing of the call is stored (frames are packed unchecked)
SELECT * FROM queen.push(ARRAY['orders'], ARRAY['p9'], ARRAY[2], ARRAY['ok', repeat('x', 256)], ARRAY[NULL,NULL]::uuid[], ARRAY[NULL,NULL]::text[], ARRAY['1','2']);
SELECT * FROM queen.push(ARRAY['orders'], ARRAY['p9'], ARRAY[2], ARRAY['ok', 'ok2'], ARRAY[NULL,NULL]::uuid[], ARRAY[NULL, repeat('p', 1025)], ARRAY['1','2']);
SELECT * FROM queen.push(ARRAY['orders'], ARRAY['p9'], ARRAY[2], ARRAY['ok', 'ok2'], ARRAY[NULL,NULL]::uuid[], ARRAY[NULL,NULL]::text[], ARRAY['1',NULL]);
SELECT count(*) AS p9 FROM queen.log_partitions WHERE name = 'p9';

-- delete removes everything of the queue
SELECT queen.delete_queue('orders'), queen.delete_queue('orders');
SELECT (SELECT count(*) FROM queen.log_segments) AS segments, (SELECT count(*) FROM queen.log_consumers) AS cursors,
       (SELECT count(*) FROM queen.log_dedup) AS dedup, (SELECT count(*) FROM queen.dead_letters) AS dead;
