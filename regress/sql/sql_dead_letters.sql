-- Dead-letter administration from SQL (sql/procedures/75_dead_letter_admin.sql): a flat
-- checklist of listing, filters, paging, requeue (new offsets, original transaction ids,
-- dedup pointing at the new offset, merge of one message dead-lettered by two groups,
-- segment copies, undecodable and orphaned rows) and purge.
SET client_min_messages = warning;

SELECT queue_id AS qa FROM queen.configure('dla', NULL, NULL, '{}') \gset
SELECT queue_id AS qb FROM queen.configure('dlb', NULL, NULL, '{"dedupWindowSeconds": 0}') \gset

-- dla/p1: a b c; dla/p2: d; dlb/Default: e
SELECT item, status, msg_offset
  FROM queen.push(ARRAY['dla','dla','dlb'], ARRAY['p1','p2','Default'], ARRAY[3,1,1],
                  ARRAY['a','b','c','d','e'], ARRAY['00000000-0000-0000-0000-00000000000a',NULL,NULL,NULL,NULL]::uuid[],
                  ARRAY['alice',NULL,NULL,NULL,NULL], ARRAY['{"n":1}','{"n":2}','{"n":3}','{"n":4}','"five"'])
 ORDER BY item;
SELECT id AS p1 FROM queen.log_partitions WHERE queue_id = :qa AND name = 'p1' \gset
SELECT id AS p2 FROM queen.log_partitions WHERE queue_id = :qa AND name = 'p2' \gset
SELECT id AS pb FROM queen.log_partitions WHERE queue_id = :qb AND name = 'Default' \gset

-- dead letters, one statement each (failed_at = statement order): a by g1 then g2 (the same
-- message for two groups), b by g1, d by the queue mode, e by g1
SELECT queen.dead_letter(:qa, :p1, 1, 'g1', 'boom a', 3, 'retries_exhausted');
SELECT queen.dead_letter(:qa, :p1, 1, 'g2', 'boom a2', 1, 'dlq');
SELECT queen.dead_letter(:qa, :p1, 2, 'g1', 'boom b', 0, 'dlq');
SELECT queen.dead_letter(:qa, :p2, 1, '__QUEUE_MODE__', NULL, 0, 'dlq');
SELECT queen.dead_letter(:qb, :pb, 1, 'g1', 'boom e', 4, 'retries_exhausted');

-- listing: newest failure first, payload verbatim, id derived from (partition, offset)
SELECT queue, partition, msg_offset, consumer_group, transaction_id, trace_id, producer_sub, payload,
       error_message, attempts, reason, segment IS NULL AS decoded,
       message_id = queen.message_id(partition_id, msg_offset) AS id_ok, created_at IS NOT NULL AS has_created
  FROM queen.list_dead_letters(p_queue => 'dla');
SELECT queen.count_dead_letters(p_queue => 'dla'), queen.count_dead_letters(p_queue => 'dlb');

-- filters combine; an unknown queue matches nothing (other suites' queues are left out here)
SELECT queue, msg_offset, consumer_group FROM queen.list_dead_letters(p_group => 'g1') WHERE queue IN ('dla', 'dlb');
SELECT queue, msg_offset, consumer_group FROM queen.list_dead_letters(p_queue => 'dla', p_group => 'g1');
SELECT queue, partition, msg_offset FROM queen.list_dead_letters(p_partition => 'p2') WHERE queue IN ('dla', 'dlb');
SELECT queue, partition, msg_offset FROM queen.list_dead_letters(p_queue => 'dlb', p_partition => 'p2');
SELECT queen.count_dead_letters(p_queue => 'no-such-queue');
SELECT consumer_group FROM queen.list_dead_letters(p_message_id => queen.message_id(:p1, 1)) ORDER BY 1;
SELECT queen.count_dead_letters(p_queue => 'dla', p_from => now() + interval '1 day'),
       queen.count_dead_letters(p_queue => 'dla', p_to => now() - interval '1 day'),
       queen.count_dead_letters(p_queue => 'dla', p_from => now() - interval '1 day', p_to => now() + interval '1 day');
-- paging
SELECT msg_offset, consumer_group FROM queen.list_dead_letters(p_queue => 'dla', p_limit => 2, p_offset => 1);
SELECT count(*) FROM queen.list_dead_letters(p_queue => 'dla', p_limit => 10, p_offset => 10);

-- requeue and purge refuse an empty filter unless p_all
SELECT * FROM queen.requeue_dead_letters();
SELECT queen.purge_dead_letters();

-- requeue dla: the oldest failure first; a (two groups) is pushed once, b next, d to p2
SELECT status, queue_name, partition_name, msg_offset, transaction_id, consumer_group,
       message_id = queen.message_id(partition_id, msg_offset) AS new_id_ok,
       previous_id = queen.message_id(partition_id, CASE WHEN transaction_id = 'b' THEN 2 ELSE 1 END) AS prev_ok
  FROM queen.requeue_dead_letter_set(p_queue => 'dla');
-- new messages at the end of their partitions, with their original identity and payload
SELECT partition, "offset", transaction_id, trace_id, producer_sub, payload
  FROM queen.messages WHERE queue = 'dla' ORDER BY partition, "offset";
SELECT name, queen.partition_last_offset(id) AS last_offset FROM queen.log_partitions WHERE queue_id = :qa ORDER BY name;
-- the dedup entries name the new offsets, so a push of 'a' now is a duplicate of offset 4
SELECT transaction_id, msg_offset FROM queen.log_dedup WHERE partition_id = :p1 ORDER BY transaction_id;
SELECT item, status, msg_offset
  FROM queen.push(ARRAY['dla'], ARRAY['p1'], ARRAY[1], ARRAY['a'], ARRAY[NULL]::uuid[], ARRAY[NULL]::text[],
                  ARRAY['"again"']);
-- the dead letters are gone; dlb's is untouched
SELECT queen.count_dead_letters(p_queue => 'dla'), queen.count_dead_letters(p_queue => 'dlb');

-- the counting form; dlb has dedup off (no dedup row is written)
SELECT * FROM queen.requeue_dead_letters(p_queue => 'dlb');
SELECT "offset", transaction_id, payload FROM queen.messages WHERE queue = 'dlb' ORDER BY "offset";
SELECT count(*) FROM queen.log_dedup WHERE partition_id = :pb;

-- p_limit: oldest failures first
SELECT queen.dead_letter(:qa, :p1, 2, 'g3', 'x', 0, 'dlq');
SELECT queen.dead_letter(:qa, :p1, 3, 'g3', 'y', 0, 'dlq');
SELECT status, msg_offset, transaction_id FROM queen.requeue_dead_letter_set(p_group => 'g3', p_limit => 1);
SELECT msg_offset, transaction_id FROM queen.list_dead_letters(p_group => 'g3');

-- a segment copy (payload NULL): the trigger records where its frame sits; SQL decodes raw
INSERT INTO queen.dead_letters (queue_id, partition_id, msg_offset, consumer_group, segment, error_message,
                                attempts, reason, created_at)
SELECT :qa, :p1, 3, 'copy', s.body, 'copied', 1, 'dlq', s.created_at
  FROM queen.log_segments s WHERE s.partition_id = :p1 AND s.first_offset = 1;
SELECT msg_offset, segment_first_offset FROM queen.dead_letters WHERE consumer_group = 'copy';
SELECT msg_offset, transaction_id, payload, segment IS NULL AS decoded_in_sql
  FROM queen.list_dead_letters(p_group => 'copy');

-- an undecodable copy (zstd without the extension) and an orphan (partition gone)
INSERT INTO queen.dead_letters (queue_id, partition_id, msg_offset, consumer_group, segment, attempts, reason)
VALUES (:qa, :p2, 1, 'zstd', decode('5153454701010000' || '00000001' || '00000016' || '00', 'hex'), 0, 'dlq'),
       (:qa, -1, 1, 'orphan', NULL, 0, 'dlq');
SELECT consumer_group, payload IS NULL AS no_payload, segment IS NOT NULL AS has_copy, segment_first_offset
  FROM queen.list_dead_letters(p_group => 'zstd');
SELECT dead_letter_segments.msg_offset, dead_letter_segments.segment_first_offset
  FROM queen.dead_letter_segments(p_group => 'zstd');
-- requeue: the raw copy is requeued, the zstd one and the orphan are skipped and kept
SELECT status, consumer_group, msg_offset, transaction_id
  FROM queen.requeue_dead_letter_set(p_queue => 'dla', p_group => 'copy')
UNION ALL
SELECT status, consumer_group, msg_offset, transaction_id
  FROM queen.requeue_dead_letter_set(p_group => 'zstd')
UNION ALL
SELECT status, consumer_group, msg_offset, transaction_id
  FROM queen.requeue_dead_letter_set(p_group => 'orphan');
-- the broker hands the decoded frame of the zstd copy in
SELECT status, partition_name, msg_offset, transaction_id
  FROM queen.requeue_dead_letter_set(
         p_group => 'zstd',
         p_decoded_ids => ARRAY[(SELECT id FROM queen.dead_letters WHERE consumer_group = 'zstd')],
         p_decoded_txids => ARRAY['z'], p_decoded_trace_ids => ARRAY[NULL]::uuid[],
         p_decoded_producers => ARRAY[NULL]::text[], p_decoded_payloads => ARRAY['{"z":true}']);
SELECT partition, "offset", transaction_id, payload FROM queen.messages
 WHERE queue = 'dla' AND transaction_id IN ('c', 'z') ORDER BY partition, "offset";

-- purge by filter, then everything (p_all) inside a transaction that is rolled back
SELECT queen.purge_dead_letters(p_group => 'orphan');
SELECT queen.purge_dead_letters(p_queue => 'dla', p_group => 'g3');
BEGIN;
SELECT queen.purge_dead_letters(p_all => true) >= 0 AS purged;
SELECT count(*) FROM queen.dead_letters;
ROLLBACK;
SELECT queen.count_dead_letters(p_queue => 'dla') + queen.count_dead_letters(p_queue => 'dlb');

-- deleting the queues removes what is left
SELECT queen.delete_queue('dla'), queen.delete_queue('dlb');
