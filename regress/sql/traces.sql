-- Message traces from SQL (sql/procedures/76_traces.sql): record, per-message listing in time
-- order, listing by name with counts, distinct names, defaults, unknown partitions, and the
-- removal of a partition's traces with its queue.
SET client_min_messages = warning;

SELECT queue_id AS q, partition_id AS p FROM queen.configure('trq', NULL, NULL, '{}') \gset

-- record: defaults for group ('' or NULL: queue mode), event type (NULL: info), names
SELECT queen.record_trace(:p, 'tx1', NULL, NULL, '{"step":1}', NULL) IS NOT NULL AS stored;
SELECT queen.record_trace(:p, 'tx1', 'workers', 'processing', '{"step":2}', ARRAY['order-7', 'tenant-a']) IS NOT NULL;
SELECT queen.record_trace(:p, 'tx1', '', 'done', 'null', ARRAY['order-7']) IS NOT NULL;
SELECT queen.record_trace(:p, 'tx2', 'workers', 'info', '[1,2]', ARRAY['order-7']) IS NOT NULL;
-- an unknown partition stores nothing (NULL); missing transaction id or data raise 22023
SELECT queen.record_trace(-5, 'tx1', NULL, NULL, '{}', NULL) IS NULL AS unknown_partition;
SELECT queen.record_trace(:p, '', NULL, NULL, '{}', NULL);
SELECT queen.record_trace(:p, 'tx1', NULL, NULL, NULL, NULL);

-- one message's traces in time order
SELECT transaction_id, consumer_group, event_type, data, trace_names, partition_id = :p AS same_partition
  FROM queen.message_traces_of(:p, 'tx1');
SELECT count(*) FROM queen.message_traces_of(:p, 'nope');

-- by name, in time order, with queue and partition names; paging; counts
SELECT transaction_id, event_type, data, queue, partition FROM queen.traces_by_name('order-7');
SELECT transaction_id, event_type FROM queen.traces_by_name('order-7', 1, 1);
SELECT queen.count_traces_by_name('order-7'), queen.count_traces_by_name('tenant-a'), queen.count_traces_by_name('none');
SELECT trace_name, trace_count, message_count FROM queen.trace_names() WHERE trace_name IN ('order-7', 'tenant-a')
 ORDER BY trace_name;

-- deleting the queue deletes its partitions and, with them, their traces
SELECT queen.delete_queue('trq');
SELECT count(*) FROM queen.message_traces WHERE partition_id = :p;
