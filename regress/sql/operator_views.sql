-- The operator's views (sql/procedures/92_operator_views.sql, docs/operations.md) on a known
-- state: lag and leases per cursor, depth per queue, status per message and group.
SET client_min_messages = warning;
\set VERBOSITY terse

CREATE FUNCTION pg_temp.push(part text, txid text) RETURNS bigint LANGUAGE sql AS $$
    SELECT msg_offset FROM queen.push(ARRAY['ov_q'], ARRAY[part], ARRAY[1], ARRAY[txid],
                                      ARRAY[NULL::uuid], ARRAY[NULL::text], ARRAY['{}'])
$$;
CREATE FUNCTION pg_temp.ack(grp text, part text, txid text, status text) RETURNS boolean LANGUAGE sql AS $$
    SELECT success FROM queen.ack(grp, ARRAY[(SELECT p.id FROM queen.log_partitions p JOIN queen.queues q
                                               ON q.id = p.queue_id WHERE q.name = 'ov_q' AND p.name = part)],
        ARRAY[txid], ARRAY[NULL]::bigint[], ARRAY[NULL]::uuid[], ARRAY[status], ARRAY[NULL]::text[])
$$;

SELECT queen.configure('ov_q', NULL, NULL, jsonb_build_object('retryDelay', 0, 'retryLimit', 0)) IS NOT NULL AS configured;
SELECT pg_temp.push('a', 'a1'), pg_temp.push('a', 'a2'), pg_temp.push('a', 'a3'), pg_temp.push('b', 'b1');

-- g: a1 acknowledged, a2 leased, a3 waiting; b1 dead-lettered. h: registered, nothing consumed.
SELECT count(*) FROM queen.pop('ov_q', 'a', 'g', 1, 1, false, true, NULL);
SELECT pg_temp.ack('g', 'a', 'a1', 'completed');
SELECT count(*) FROM queen.pop('ov_q', 'a', 'g', 1, 1, false, true, NULL);
SELECT count(*) FROM queen.pop('ov_q', 'b', 'g', 1, 1, false, true, NULL);
SELECT pg_temp.ack('g', 'b', 'b1', 'failed');
SELECT count(*) FROM queen.pop('ov_q', 'none', 'h', 1, 1, false, true, NULL);

SELECT partition, consumer_group, committed, head, lag, leased, oldest_waiting_at IS NOT NULL AS waiting,
       time_lag_seconds BETWEEN 0 AND 60 AS recent, lease_id IS NOT NULL AS leased_now,
       last_moved_at IS NOT NULL AS moved
  FROM queen.consumer_lag WHERE queue = 'ov_q' ORDER BY partition, consumer_group;

SELECT queue, partitions, total, pending, processing, completed, dead_letters, oldest_waiting_at IS NOT NULL AS waiting
  FROM queen.queue_depth WHERE queue = 'ov_q';

SELECT partition, "offset", transaction_id, consumer_group, status
  FROM queen.message_status WHERE queue = 'ov_q' ORDER BY partition, "offset", consumer_group;

SELECT queen.delete_queue('ov_q');
SELECT count(*) FROM queen.delete_group('g', NULL, true);
SELECT count(*) FROM queen.delete_group('h', NULL, true);
