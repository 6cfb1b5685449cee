-- queen.live_span_segments(partition_ids, groups): the segments a broker must decode itself
-- to place acks by transaction id (broker/api/delivery/opaque_span_offsets.hpp): for each (partition,
-- group) pair with a live leased span (committed, lease_end], its segments that overlap the
-- span and that SQL cannot decode (codec <> raw), with the span bounds.
-- Reads only; takes no locks (queen.ack, called after it, locks and checks again).
CREATE OR REPLACE FUNCTION queen.live_span_segments(p_partition_ids bigint[], p_groups text[])
RETURNS TABLE(partition_id bigint, consumer_group text, committed bigint, lease_end bigint,
              first_offset bigint, body bytea)
LANGUAGE sql STABLE
AS $$
    SELECT k.pid, k.grp, c.committed, c.lease_end, s.first_offset, s.body
      FROM unnest(p_partition_ids, p_groups) AS k(pid, grp)
     CROSS JOIN LATERAL (  -- the cursor's newest version first (51_cursor_versions.sql)
        SELECT lc.committed, lc.lease_end FROM queen.log_consumers lc
         WHERE lc.partition_id = k.pid AND lc.consumer_group = k.grp
         ORDER BY lc.version DESC LIMIT 1) c
      JOIN queen.log_segments s ON s.partition_id = k.pid AND s.last_offset > c.committed
                                AND s.first_offset <= c.lease_end
     WHERE s.codec <> 0 AND c.lease_end IS NOT NULL
$$;
COMMENT ON FUNCTION queen.live_span_segments(bigint[], text[]) IS
  'Segments SQL cannot decode that overlap the live leased span of each (partition, group) pair, with the span.';
