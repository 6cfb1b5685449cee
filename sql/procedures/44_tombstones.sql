-- Tombstones (migration 18; docs/delivery-guarantees.md, "Deleted messages"). A deleted
-- message stays in its segment until retention drops the segment; a tombstone says that no
-- group is ever handed it again and that browsing shows it as deleted:
--   * pops skip it: a span never starts on one, and its tombstoned offsets inside a span are
--     not delivered (queen.pop returns them as skip_offsets);
--   * a commit that reaches the offset before a tombstone moves over the tombstones that follow
--     it, up to the span end, so a lease still ends at its span end (queen.ack, ack_completed);
--   * a nack of a copy handed out before the delete acts as completed: no redelivery, no
--     attempt, no dead letter; dead-lettering never stores a tombstoned message.
-- Delete and dead-lettering of one partition serialize on queen.tombstone_lock, so a dead
-- letter written concurrently with a delete cannot survive it.

-- queen.tombstone_lock(partition): the transaction lock a delete and every dead-lettering of
-- that partition take first.
CREATE OR REPLACE FUNCTION queen.tombstone_lock(p_partition_id bigint)
RETURNS void
LANGUAGE sql
AS $$ SELECT pg_advisory_xact_lock(1364479298, (p_partition_id % 2147483647)::integer) $$;
COMMENT ON FUNCTION queen.tombstone_lock(bigint) IS
  'Transaction advisory lock that orders a message delete with dead-lettering on the same partition.';

-- queen.past_tombstones(partition, offset, upto): the offset reached by moving from p_offset
-- over the run of tombstoned offsets that follows it, at most p_upto. One index probe per
-- tombstone of the run, plus one.
CREATE OR REPLACE FUNCTION queen.past_tombstones(p_partition_id bigint, p_offset bigint, p_upto bigint)
RETURNS bigint
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v bigint := p_offset;
BEGIN
    WHILE v < p_upto AND EXISTS (SELECT 1 FROM queen.message_tombstones t
                                  WHERE t.partition_id = p_partition_id AND t.msg_offset = v + 1) LOOP
        v := v + 1;
    END LOOP;
    RETURN v;
END;
$$;
COMMENT ON FUNCTION queen.past_tombstones(bigint, bigint, bigint) IS
  'Offset reached by moving over the tombstones right after an offset, capped.';

-- queen.tombstones_in(partition, after, upto): the tombstoned offsets in (after, upto], in
-- order; NULL when there is none.
CREATE OR REPLACE FUNCTION queen.tombstones_in(p_partition_id bigint, p_after bigint, p_upto bigint)
RETURNS bigint[]
LANGUAGE sql STABLE
AS $$
    SELECT array_agg(t.msg_offset ORDER BY t.msg_offset) FROM queen.message_tombstones t
     WHERE t.partition_id = p_partition_id AND t.msg_offset > p_after AND t.msg_offset <= p_upto
$$;
COMMENT ON FUNCTION queen.tombstones_in(bigint, bigint, bigint) IS
  'Tombstoned offsets of a partition in (after, upto], NULL when none.';

-- queen.find_message(partition, transaction id): the offset of the stored message with this
-- transaction id, NULL when there is none. The dedup index answers while its row lives;
-- otherwise the partition's segments are decoded newest first, so a transaction id reused
-- after its dedup window finds its newest message. Messages in a segment this database cannot
-- decode (zstd without queen_ext) are found only through the dedup index.
CREATE OR REPLACE FUNCTION queen.find_message(p_partition_id bigint, p_txid text)
RETURNS bigint
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_off bigint;
BEGIN
    SELECT d.msg_offset INTO v_off FROM queen.log_dedup d
     WHERE d.partition_id = p_partition_id AND d.transaction_id = p_txid;
    IF v_off IS NOT NULL AND EXISTS (SELECT 1 FROM queen.log_segments s
                                      WHERE s.partition_id = p_partition_id AND s.last_offset >= v_off
                                        AND s.first_offset <= v_off) THEN
        RETURN v_off;
    END IF;
    SELECT s.first_offset + m.idx INTO v_off
      FROM queen.log_segments s
     CROSS JOIN LATERAL (SELECT max(f.idx) AS idx FROM queen.decode_segment(s.body) f
                          WHERE f.transaction_id = p_txid) m
     WHERE s.partition_id = p_partition_id AND m.idx IS NOT NULL
     ORDER BY s.last_offset DESC
     LIMIT 1;
    RETURN v_off;
END;
$$;
COMMENT ON FUNCTION queen.find_message(bigint, text) IS
  'Offset of the newest stored message of a partition with a transaction id, or NULL.';

-- queen.delete_message(partition, transaction id, deleted_by): tombstones the message and
-- removes its dead letters of every group, in one transaction. No row: no such message.
-- already_deleted: it was tombstoned before (nothing changes). queue_name: the partition's queue.
DROP FUNCTION IF EXISTS queen.delete_message(bigint, text, text);  -- it gained queue_name
CREATE FUNCTION queen.delete_message(p_partition_id bigint, p_txid text, p_deleted_by text)
RETURNS TABLE(msg_offset bigint, already_deleted boolean, deleted_at timestamptz, queue_name text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_off bigint := queen.find_message(p_partition_id, p_txid);
BEGIN
    IF v_off IS NULL THEN
        RETURN;
    END IF;
    PERFORM queen.tombstone_lock(p_partition_id);
    msg_offset := v_off;
    INSERT INTO queen.message_tombstones (partition_id, msg_offset, deleted_by)
    VALUES (p_partition_id, v_off, p_deleted_by)
    ON CONFLICT DO NOTHING;
    already_deleted := NOT FOUND;
    DELETE FROM queen.dead_letters d WHERE d.partition_id = p_partition_id AND d.msg_offset = v_off;
    SELECT t.deleted_at INTO deleted_at FROM queen.message_tombstones t
     WHERE t.partition_id = p_partition_id AND t.msg_offset = v_off;
    SELECT q.name INTO queue_name FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
     WHERE p.id = p_partition_id;
    RETURN NEXT;
END;
$$;
COMMENT ON FUNCTION queen.delete_message(bigint, text, text) IS
  'Tombstones a message (delivery skips it for every group) and removes its dead letters.';
