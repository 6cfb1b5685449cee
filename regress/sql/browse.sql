-- Browsing and tombstones (sql/procedures/44_tombstones.sql, 73_browse.sql): the status
-- rules, paging and filters of queen.browse_messages, queen.message_detail, and deletes:
-- pops skip tombstones, a span of only tombstones advances, commits move over them, a nack of
-- a tombstoned copy acts as completed, dead letters go with the delete, retention drops them.
SET client_min_messages = warning;
\set VERBOSITY terse

CREATE FUNCTION pg_temp.push(q text, part text, txid text) RETURNS bigint LANGUAGE sql AS $$
    SELECT msg_offset FROM queen.push(ARRAY[q], ARRAY[part], ARRAY[1], ARRAY[txid],
                                      ARRAY[NULL::uuid], ARRAY[NULL::text], ARRAY['{"n":"' || txid || '"}'])
$$;
CREATE FUNCTION pg_temp.pid(q text, part text) RETURNS bigint LANGUAGE sql AS $$
    SELECT p.id FROM queen.log_partitions p JOIN queen.queues qu ON qu.id = p.queue_id
     WHERE qu.name = q AND p.name = part
$$;
CREATE FUNCTION pg_temp.ack(q text, grp text, part text, off bigint, status text) RETURNS text LANGUAGE sql AS $$
    SELECT success || coalesce(' ' || error, '') || CASE WHEN dlq THEN ' dlq' ELSE '' END
           || CASE WHEN lease_released THEN ' released' ELSE '' END
      FROM queen.ack(grp, ARRAY[pg_temp.pid(q, part)], ARRAY[''], ARRAY[off], ARRAY[NULL]::uuid[],
                     ARRAY[status], ARRAY['boom']::text[])
$$;
-- The offsets a pop hands out (tombstoned ones left out), as queen.claim returns them.
CREATE FUNCTION pg_temp.popped(q text, part text, grp text, n integer) RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(string_agg(c."offset"::text, ',' ORDER BY c."offset"), '-')
      FROM queen.claim(q, grp, n, part) c
$$;
CREATE FUNCTION pg_temp.cursor(q text, part text, grp text) RETURNS text LANGUAGE sql AS $$
    SELECT committed || CASE WHEN lease_id IS NOT NULL THEN ' leased to ' || lease_end ELSE '' END
      FROM queen.log_consumers WHERE partition_id = pg_temp.pid(q, part) AND consumer_group = grp
$$;
CREATE FUNCTION pg_temp.del(q text, part text, txid text) RETURNS text LANGUAGE sql AS $$
    SELECT coalesce((SELECT msg_offset || CASE WHEN already_deleted THEN ' again' ELSE '' END
                       FROM queen.delete_message(pg_temp.pid(q, part), txid, NULL)), 'not found')
$$;

SELECT queen.configure('br_q', 'br_ns', 'br_task', jsonb_build_object('retryDelay', 0, 'retryLimit', 0)) IS NOT NULL;
SELECT pg_temp.push('br_q', 'a', 'a' || g) FROM generate_series(1, 8) g;

-- Deletes: found by transaction id, twice, unknown.
SELECT pg_temp.del('br_q', 'a', 'a1'), pg_temp.del('br_q', 'a', 'a2'), pg_temp.del('br_q', 'a', 'a4'),
       pg_temp.del('br_q', 'a', 'a8');
SELECT pg_temp.del('br_q', 'a', 'a2'), pg_temp.del('br_q', 'a', 'nope'), pg_temp.del('br_q', 'zz', 'a1');

-- Queue mode: the leading tombstones 1, 2 are passed (the span is 3..5); 4 is not handed out.
SELECT pg_temp.popped('br_q', 'a', '__QUEUE_MODE__', 3) AS popped, pg_temp.cursor('br_q', 'a', '__QUEUE_MODE__');
-- Acknowledging 3 moves the cursor over the tombstone 4; the lease keeps 5.
SELECT pg_temp.ack('br_q', '__QUEUE_MODE__', 'a', 3, 'completed'), pg_temp.cursor('br_q', 'a', '__QUEUE_MODE__');
-- 5 was handed out and is deleted now: its nack acts as completed (no redelivery, no dead letter).
SELECT pg_temp.del('br_q', 'a', 'a5');
SELECT pg_temp.ack('br_q', '__QUEUE_MODE__', 'a', 5, 'failed'), pg_temp.cursor('br_q', 'a', '__QUEUE_MODE__');
SELECT count(*) AS dead_letters FROM queen.dead_letters WHERE partition_id = pg_temp.pid('br_q', 'a');
-- 6, 7 come; after them only the tombstone 8: the cursor passes it, nothing is handed out.
SELECT pg_temp.popped('br_q', 'a', '__QUEUE_MODE__', 5) AS popped;
SELECT pg_temp.ack('br_q', '__QUEUE_MODE__', 'a', 7, 'completed'), pg_temp.cursor('br_q', 'a', '__QUEUE_MODE__');
SELECT pg_temp.popped('br_q', 'a', '__QUEUE_MODE__', 5) AS popped, pg_temp.cursor('br_q', 'a', '__QUEUE_MODE__');
-- A named group sees the same: offsets and order unaffected.
SELECT pg_temp.popped('br_q', 'a', 'g', 10) AS popped;

-- A partition whose backlog is only tombstones does not hide the next one from a queue-wide pop.
SELECT queen.configure('br_t', NULL, NULL, '{}'::jsonb) IS NOT NULL;
SELECT pg_temp.push('br_t', 'p1', 't1'), pg_temp.push('br_t', 'p2', 't2');
SELECT pg_temp.del('br_t', 'p1', 't1');
SELECT partition, "offset" FROM queen.claim('br_t', '__QUEUE_MODE__', 1);
SELECT pg_temp.cursor('br_t', 'p1', '__QUEUE_MODE__');

-- A lease that expires after its head was deleted counts no attempt: with retryLimit 0 the
-- next message is delivered, not dead-lettered.
SELECT pg_temp.push('br_q', 'f', 'f' || g) FROM generate_series(1, 2) g;
SELECT pg_temp.popped('br_q', 'f', '__QUEUE_MODE__', 1) AS popped, pg_temp.del('br_q', 'f', 'f1');
UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second'
 WHERE partition_id = pg_temp.pid('br_q', 'f') AND consumer_group = '__QUEUE_MODE__';
SELECT pg_temp.popped('br_q', 'f', '__QUEUE_MODE__', 1) AS popped, pg_temp.cursor('br_q', 'f', '__QUEUE_MODE__'),
       (SELECT attempts FROM queen.log_consumers WHERE partition_id = pg_temp.pid('br_q', 'f')
           AND consumer_group = '__QUEUE_MODE__') AS attempts,
       (SELECT count(*) FROM queen.dead_letters WHERE partition_id = pg_temp.pid('br_q', 'f')) AS dead_letters;

-- Dead letters go with the delete, in every group; a dead letter is never written for a
-- tombstoned message.
SELECT pg_temp.push('br_q', 'b', 'b' || g) FROM generate_series(1, 3) g;
SELECT pg_temp.popped('br_q', 'b', 'g', 1) AS popped, pg_temp.ack('br_q', 'g', 'b', 1, 'dlq');
SELECT pg_temp.popped('br_q', 'b', 'h', 1) AS popped, pg_temp.ack('br_q', 'h', 'b', 1, 'dlq');
SELECT count(*) AS dead_letters_b1 FROM queen.dead_letters WHERE partition_id = pg_temp.pid('br_q', 'b');
SELECT pg_temp.del('br_q', 'b', 'b1');
SELECT count(*) AS dead_letters_b1 FROM queen.dead_letters WHERE partition_id = pg_temp.pid('br_q', 'b');
SELECT pg_temp.del('br_q', 'b', 'b2');
SELECT queen.dead_letter(q.id, pg_temp.pid('br_q', 'b'), 2, 'g', 'x', 0, 'dlq') FROM queen.queues q WHERE q.name = 'br_q';
SELECT count(*) AS dead_letters_b2 FROM queen.dead_letters WHERE partition_id = pg_temp.pid('br_q', 'b') AND msg_offset = 2;

-- Statuses, rule by rule (partition c): 1 deleted, 2 dead letter, queue mode: 3 completed,
-- 4 processing, 5 pending; partition d, named groups only: completed when both consumed.
SELECT pg_temp.push('br_q', 'c', 'c' || g) FROM generate_series(1, 5) g;
SELECT pg_temp.push('br_q', 'e', 'e1');
SELECT queen.configure('br_bus', NULL, NULL, '{}'::jsonb) IS NOT NULL;
SELECT pg_temp.push('br_bus', 'd', 'd' || g) FROM generate_series(1, 3) g;
SELECT pg_temp.del('br_q', 'c', 'c1');
SELECT pg_temp.popped('br_q', 'c', '__QUEUE_MODE__', 1) AS popped, pg_temp.ack('br_q', '__QUEUE_MODE__', 'c', 2, 'dlq');
SELECT pg_temp.popped('br_q', 'c', '__QUEUE_MODE__', 1) AS popped, pg_temp.ack('br_q', '__QUEUE_MODE__', 'c', 3, 'completed');
SELECT pg_temp.popped('br_q', 'c', '__QUEUE_MODE__', 1) AS popped;
SELECT pg_temp.popped('br_bus', 'd', 'x', 2) AS popped, pg_temp.ack('br_bus', 'x', 'd', 2, 'completed');
SELECT pg_temp.popped('br_bus', 'd', 'y', 1) AS popped, pg_temp.ack('br_bus', 'y', 'd', 1, 'completed');
SELECT pg_temp.popped('br_bus', 'd', 'y', 1) AS popped;

SELECT partition, msg_offset, status, queue_status, consumed_by, total_groups, lease_expires_at IS NOT NULL AS leased,
       transaction_id, namespace, task
  FROM queen.browse_messages('br_q', NULL, NULL, NULL, NULL, NULL, now() - interval '1 hour', now() + interval '1 minute', 100, 0)
 WHERE partition IN ('c', 'e')
 ORDER BY partition, msg_offset;
SELECT partition, msg_offset, status, queue_status, consumed_by, total_groups
  FROM queen.browse_messages('br_bus', NULL, NULL, NULL, NULL, NULL, now() - interval '1 hour', now() + interval '1 minute', 100, 0)
 ORDER BY msg_offset;
-- For one group alone.
SELECT msg_offset, status FROM queen.browse_messages('br_bus', 'd', NULL, NULL, NULL, 'x', '-infinity', 'infinity', 100, 0)
 ORDER BY msg_offset;
SELECT msg_offset, status FROM queen.browse_messages('br_bus', 'd', NULL, NULL, NULL, 'y', '-infinity', 'infinity', 100, 0)
 ORDER BY msg_offset;
-- The operator's view agrees, per group.
SELECT partition, "offset", consumer_group, status FROM queen.message_status
 WHERE queue IN ('br_q', 'br_bus') AND partition IN ('c', 'd') AND consumer_group IN ('__QUEUE_MODE__', 'x', 'y')
 ORDER BY partition, "offset", consumer_group;

-- Order (newest first), paging after the status filter, filters that match nothing.
SELECT string_agg(partition || msg_offset, ' ' ORDER BY n) AS page
  FROM (SELECT b.*, row_number() OVER () AS n
          FROM queen.browse_messages('br_q', NULL, NULL, NULL, NULL, NULL, '-infinity', 'infinity', 100, 0) b) x;
SELECT string_agg(partition || msg_offset, ' ' ORDER BY n) AS page
  FROM (SELECT b.*, row_number() OVER () AS n
          FROM queen.browse_messages('br_q', NULL, NULL, NULL, NULL, NULL, '-infinity', 'infinity', 3, 2) b) x;
SELECT string_agg(partition || msg_offset, ' ' ORDER BY n) AS deleted
  FROM (SELECT b.*, row_number() OVER () AS n
          FROM queen.browse_messages('br_q', NULL, NULL, NULL, 'deleted', NULL, '-infinity', 'infinity', 2, 1) b) x;
SELECT string_agg(partition || msg_offset, ' ' ORDER BY n) AS pending_in_ns
  FROM (SELECT b.*, row_number() OVER () AS n
          FROM queen.browse_messages(NULL, NULL, 'br_ns', 'br_task', 'pending', NULL, '-infinity', 'infinity', 100, 0) b) x;
SELECT count(*) FROM queen.browse_messages('nope', NULL, NULL, NULL, NULL, NULL, '-infinity', 'infinity', 100, 0);
SELECT count(*) FROM queen.browse_messages('br_q', NULL, 'other', NULL, NULL, NULL, '-infinity', 'infinity', 100, 0);
SELECT count(*) FROM queen.browse_messages('br_q', NULL, NULL, NULL, NULL, NULL, now() + interval '1 hour', 'infinity', 100, 0);
SELECT count(*) FROM queen.browse_messages('br_q', NULL, NULL, NULL, NULL, NULL, '-infinity', 'infinity', 0, 0);
SELECT * FROM queen.browse_mode(ARRAY[pg_temp.pid('br_q', 'c'), pg_temp.pid('br_bus', 'd')]);
SELECT * FROM queen.browse_mode(ARRAY[pg_temp.pid('br_bus', 'd')]);
SELECT * FROM queen.browse_mode('{}');

-- The time window: segment_offset_at finds the newest segment at or before a time.
SELECT queen.configure('br_w', NULL, NULL, '{}'::jsonb) IS NOT NULL;
INSERT INTO queen.log_partitions (queue_id, name) SELECT id, 'w' FROM queen.queues WHERE name = 'br_w';
INSERT INTO queen.log_segments (partition_id, first_offset, last_offset, codec, created_at, body)
SELECT pg_temp.pid('br_w', 'w'), 2 * g - 1, 2 * g, 0, timestamptz '2026-01-01' + g * interval '1 minute',
       queen.segment_pack_raw(timestamptz '2026-01-01' + g * interval '1 minute', ARRAY['w' || 2 * g - 1, 'w' || 2 * g],
                              ARRAY[NULL, NULL]::uuid[], ARRAY[NULL, NULL]::text[], ARRAY['1', '2'])
  FROM generate_series(1, 50) g;
SELECT queen.segment_offset_at(pg_temp.pid('br_w', 'w'), t) AS at
  FROM unnest(ARRAY[timestamptz '2025-12-31', '2026-01-01 00:01', '2026-01-01 00:01:30', '2026-01-01 00:17',
                    '2026-01-01 00:49:59', '2026-01-01 00:50', '2027-01-01']) t;
SELECT string_agg(msg_offset::text || ':' || transaction_id, ' ' ORDER BY msg_offset DESC) AS window
  FROM queen.browse_messages('br_w', NULL, NULL, NULL, NULL, NULL, '2026-01-01 00:10', '2026-01-01 00:12', 100, 0);

-- Detail: frame, payload, status, queue options; a deleted message has no payload.
SELECT msg_offset, partition, transaction_id, payload, status, deleted_at IS NULL AS live, error_message,
       retry_count, lease_time, retry_limit, retry_delay, ttl, priority
  FROM queen.message_detail(pg_temp.pid('br_q', 'c'), 'c2');
SELECT msg_offset, transaction_id, payload, status, deleted_at IS NOT NULL AS deleted
  FROM queen.message_detail(pg_temp.pid('br_q', 'c'), 'c1');
SELECT count(*) FROM queen.message_detail(pg_temp.pid('br_q', 'c'), 'nope');
SELECT consumer_group, consumed, lease_expires_at IS NOT NULL AS leased
  FROM queen.message_consumer_groups(pg_temp.pid('br_bus', 'd'), 2);

-- Retention drops a segment with its tombstones; deleting the queue drops the rest.
SELECT count(*) AS tombstones FROM queen.message_tombstones WHERE partition_id = pg_temp.pid('br_q', 'a');
SELECT queen.delete_segments(ARRAY[pg_temp.pid('br_q', 'a')], ARRAY[2::bigint]);
SELECT string_agg(msg_offset::text, ',' ORDER BY msg_offset) AS tombstones
  FROM queen.message_tombstones WHERE partition_id = pg_temp.pid('br_q', 'a');
SELECT queen.delete_queue(n) FROM unnest(ARRAY['br_q', 'br_t', 'br_w', 'br_bus']) n;
SELECT count(*) AS tombstones FROM queen.message_tombstones;
SELECT count(*) FROM unnest(ARRAY['g', 'h', 'x', 'y']) g, LATERAL queen.delete_group(g, NULL, true);
