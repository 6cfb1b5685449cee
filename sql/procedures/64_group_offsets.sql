-- Cursor positions derived from time (consumer-group administration).
-- queen.offset_at_time(partition id, time, inclusive): the committed offset that puts a
--   cursor right after every message created before the time (inclusive = false: the
--   subscription rule, "starts at its first message created at or after the start") or at
--   or before it (inclusive = true: the seek rule, "the last message at or before the time
--   stamp"). createdAt is shared by a segment and monotone per partition, so the answer is
--   the last_offset of the newest qualifying segment. When no segment qualifies it is the
--   offset just before the oldest stored segment (0 for an intact partition; after a
--   retention sweep the first message still stored), and for a partition with no segment
--   left its last_offset (nothing to hand out). NULL time: from the beginning (0 or the
--   offset before the oldest stored segment).
-- Reads only; takes no locks. Cost: one backward scan of the partition's segment index
--   from its end down to the first qualifying segment.

CREATE OR REPLACE FUNCTION queen.offset_at_time(p_partition_id bigint, p_at timestamptz, p_inclusive boolean)
RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(
        (SELECT s.last_offset FROM queen.log_segments s
          WHERE p_at IS NOT NULL
            AND s.partition_id = p_partition_id
            AND (s.created_at < p_at OR (p_inclusive AND s.created_at = p_at))
          ORDER BY s.last_offset DESC
          LIMIT 1),
        (SELECT s.first_offset - 1 FROM queen.log_segments s
          WHERE s.partition_id = p_partition_id
          ORDER BY s.last_offset
          LIMIT 1),
        queen.partition_last_offset(p_partition_id),
        0)
$$;
COMMENT ON FUNCTION queen.offset_at_time(bigint, timestamptz, boolean) IS
  'Committed offset placing a cursor after every message created before (or at, when inclusive) a time.';
