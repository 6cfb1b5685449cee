-- queen.dead_letter: moves the message at (partition, offset) into queen.dead_letters for
-- a group, with its payload and identity decoded from its segment (or, for a segment plain
-- SQL cannot decode, a copy of that segment). Does not move any cursor: callers do.

CREATE OR REPLACE FUNCTION queen.dead_letter(
    p_queue_id bigint, p_partition_id bigint, p_offset bigint, p_group text,
    p_error text, p_attempts integer, p_reason text)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    s record;
    f record;
BEGIN
    SELECT seg.first_offset, seg.codec, seg.created_at, seg.body INTO s
      FROM queen.log_segments seg
     WHERE seg.partition_id = p_partition_id AND seg.last_offset >= p_offset
     ORDER BY seg.last_offset
     LIMIT 1;
    IF NOT FOUND OR s.first_offset > p_offset THEN
        RETURN;  -- already removed by retention: nothing left to keep
    END IF;
    IF s.codec = 0 THEN
        SELECT * INTO f FROM queen.decode_segment(s.body) d WHERE d.idx = p_offset - s.first_offset;
        INSERT INTO queen.dead_letters (queue_id, partition_id, msg_offset, consumer_group, transaction_id,
                                        trace_id, producer_sub, payload, error_message, attempts, reason, created_at)
        VALUES (p_queue_id, p_partition_id, p_offset, p_group, f.transaction_id, f.trace_id, f.producer_sub,
                f.payload, p_error, p_attempts, p_reason, s.created_at);
    ELSE
        INSERT INTO queen.dead_letters (queue_id, partition_id, msg_offset, consumer_group, segment,
                                        error_message, attempts, reason, created_at)
        VALUES (p_queue_id, p_partition_id, p_offset, p_group, s.body, p_error, p_attempts, p_reason, s.created_at);
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.dead_letter(bigint, bigint, bigint, text, text, integer, text) IS
  'Copies one message into queen.dead_letters for a group; cursors are the caller''s.';
