-- Locating the frame of a dead letter inside its segment copy (migration 0009).
-- queen.dead_letter_segment_first(partition, offset, stored): the first offset of the
--   segment that holds (partition, offset): the stored value when there is one, else the
--   live segment's (NULL when retention removed it). Offsets are never reused in a
--   partition, so the live segment covering an offset is the one that was copied.
-- queen.dead_letters_segment_first_offset(): BEFORE INSERT trigger on queen.dead_letters
--   that records segment_first_offset for a row that carries a segment copy. The live
--   segment still exists at that moment (queen.dead_letter copies it in the same
--   statement). Reads log_segments without locking anything.

CREATE OR REPLACE FUNCTION queen.dead_letter_segment_first(p_partition_id bigint, p_offset bigint, p_stored bigint)
RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(p_stored,
                    (SELECT s.first_offset
                       FROM (SELECT seg.first_offset FROM queen.log_segments seg
                              WHERE seg.partition_id = p_partition_id AND seg.last_offset >= p_offset
                              ORDER BY seg.last_offset
                              LIMIT 1) s
                      WHERE s.first_offset <= p_offset))
$$;
COMMENT ON FUNCTION queen.dead_letter_segment_first(bigint, bigint, bigint) IS
  'First offset of the segment holding (partition, offset): the stored value, else the live segment''s, else NULL.';

CREATE OR REPLACE FUNCTION queen.dead_letters_segment_first_offset()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF NEW.segment IS NOT NULL AND NEW.segment_first_offset IS NULL THEN
        NEW.segment_first_offset := queen.dead_letter_segment_first(NEW.partition_id, NEW.msg_offset, NULL);
    END IF;
    RETURN NEW;
END;
$$;
COMMENT ON FUNCTION queen.dead_letters_segment_first_offset() IS
  'BEFORE INSERT trigger: records where a dead letter''s frame sits in its segment copy.';

CREATE OR REPLACE TRIGGER dead_letters_segment_first_offset
    BEFORE INSERT ON queen.dead_letters
    FOR EACH ROW WHEN (NEW.segment IS NOT NULL)
    EXECUTE FUNCTION queen.dead_letters_segment_first_offset();
