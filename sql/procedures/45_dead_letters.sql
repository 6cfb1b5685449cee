-- Dead-lettering. Moves messages into queen.dead_letters for a group, with their payload
-- and identity decoded from their segments (or, for a segment plain SQL cannot decode, a
-- copy of that segment, so nothing is lost). Cursors are the caller's business.
-- queen.dead_letter_range(queue, partition, from, to, group, error, attempts, reason):
--   every message of offsets from..to (those retention already removed, and tombstoned ones,
--   are skipped). It takes queen.tombstone_lock first, and reads tombstones in the statement
--   after it, so it orders with a concurrent delete (44_tombstones.sql).
-- queen.dead_letter(queue, partition, offset, group, error, attempts, reason): one message.

CREATE OR REPLACE FUNCTION queen.dead_letter_range(
    p_queue_id bigint, p_partition_id bigint, p_from bigint, p_to bigint, p_group text,
    p_error text, p_attempts integer, p_reason text)
RETURNS integer
LANGUAGE sql
AS $$
    SELECT queen.tombstone_lock(p_partition_id);
    WITH moved AS (
        INSERT INTO queen.dead_letters (queue_id, partition_id, msg_offset, consumer_group, transaction_id,
                                        trace_id, producer_sub, payload, segment, error_message, attempts,
                                        reason, created_at)
        SELECT p_queue_id, p_partition_id, s.first_offset + f.idx, p_group, f.transaction_id, f.trace_id,
               f.producer_sub, f.payload, CASE WHEN f.payload IS NULL AND s.codec <> 0 THEN s.body END,
               p_error, p_attempts, p_reason, s.created_at
          FROM queen.log_segments s
         CROSS JOIN LATERAL queen.decode_segment(s.body) f
         WHERE s.partition_id = p_partition_id
           AND s.last_offset >= p_from
           AND s.first_offset <= p_to
           AND s.first_offset + f.idx BETWEEN p_from AND p_to
           AND NOT EXISTS (SELECT 1 FROM queen.message_tombstones t
                            WHERE t.partition_id = p_partition_id AND t.msg_offset = s.first_offset + f.idx)
         ORDER BY s.first_offset + f.idx
        RETURNING 1)
    SELECT count(*)::integer FROM moved
$$;
COMMENT ON FUNCTION queen.dead_letter_range(bigint, bigint, bigint, bigint, text, text, integer, text) IS
  'Copies the messages of an offset range into queen.dead_letters for a group; returns how many.';

CREATE OR REPLACE FUNCTION queen.dead_letter(
    p_queue_id bigint, p_partition_id bigint, p_offset bigint, p_group text,
    p_error text, p_attempts integer, p_reason text)
RETURNS void
LANGUAGE sql
AS $$
    SELECT queen.dead_letter_range(p_queue_id, p_partition_id, p_offset, p_offset, p_group, p_error,
                                   p_attempts, p_reason);
$$;
COMMENT ON FUNCTION queen.dead_letter(bigint, bigint, bigint, text, text, integer, text) IS
  'Copies one message into queen.dead_letters for a group; cursors are the caller''s.';
