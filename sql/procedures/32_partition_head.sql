-- A partition's head: its newest offset and the createdAt of its newest message, read from its
-- newest segment. Pushes write only new rows (a segment, dedup rows), never the partition row:
-- under a held snapshot (pg_dump, an open REPEATABLE READ, a standby with feedback) a row
-- rewritten per push keeps every version it ever had, and every lookup walks them
-- (docs/architecture.md, "Held snapshots").
-- log_partitions.last_offset / last_created_at / last_push_at are a floor, written only when
-- housekeeping's retention removes a partition's newest segment (85_housekeeping.sql), so an
-- emptied partition never hands out an offset twice. The head is the greater of the two.
-- Readers that must see every committed push (offset allocation) call these in a statement
-- that starts after they hold the partition row lock (40_push.sql).

-- queen.partition_head(partition): the partition's newest offset (0 when it never held a
-- message), the createdAt of its newest message and when it last stored one (NULL when it never
-- did): the newest segment's, or the floor retention left, whichever is newer. No row when the
-- partition does not exist. One backward step on the segment primary key.
CREATE OR REPLACE FUNCTION queen.partition_head(p_partition_id bigint)
RETURNS TABLE(last_offset bigint, last_created_at timestamptz, last_push_at timestamptz)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT greatest(p.last_offset, s.last_offset), greatest(p.last_created_at, s.created_at),
           greatest(p.last_push_at, s.created_at)
      FROM queen.log_partitions p
      LEFT JOIN LATERAL (SELECT sg.last_offset, sg.created_at FROM queen.log_segments sg
                          WHERE sg.partition_id = p.id
                          ORDER BY sg.last_offset DESC LIMIT 1) s ON true
     WHERE p.id = p_partition_id
$$;
COMMENT ON FUNCTION queen.partition_head(bigint) IS
  'Newest offset, newest createdAt and last push time of a partition: its newest segment''s, or the floor retention left.';

-- queen.partition_last_offset(partition): partition_head's last_offset; NULL for no partition.
CREATE OR REPLACE FUNCTION queen.partition_last_offset(p_partition_id bigint)
RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT h.last_offset FROM queen.partition_head(p_partition_id) h $$;
COMMENT ON FUNCTION queen.partition_last_offset(bigint) IS
  'Newest offset of a partition (queen.partition_head).';

-- queen.partition_last_created_at(partition): partition_head's last_created_at.
CREATE OR REPLACE FUNCTION queen.partition_last_created_at(p_partition_id bigint)
RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT h.last_created_at FROM queen.partition_head(p_partition_id) h $$;
COMMENT ON FUNCTION queen.partition_last_created_at(bigint) IS
  'createdAt of the newest message of a partition (queen.partition_head).';

-- queen.partition_last_push_at(partition): partition_head's last_push_at.
CREATE OR REPLACE FUNCTION queen.partition_last_push_at(p_partition_id bigint)
RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT h.last_push_at FROM queen.partition_head(p_partition_id) h $$;
COMMENT ON FUNCTION queen.partition_last_push_at(bigint) IS
  'When a partition last stored a message (queen.partition_head).';

-- queen.raise_partition_floors(partitions, last_offsets): called with the segments about to be
-- deleted (partition, last_offset pairs); where one of them is its partition's newest, records
-- that segment's head as the partition's floor. The UPDATE takes the partition row's lock, so
-- it orders with pushes: a push that allocates offsets after it sees the floor.
CREATE OR REPLACE FUNCTION queen.raise_partition_floors(p_partition_ids bigint[], p_last_offsets bigint[])
RETURNS void
LANGUAGE sql
AS $$
    UPDATE queen.log_partitions p
       SET last_offset = h.last_offset, last_created_at = h.created_at,
           last_push_at = greatest(p.last_push_at, h.created_at)
      FROM (SELECT DISTINCT u.id FROM unnest(p_partition_ids) AS u(id)) ids
     CROSS JOIN LATERAL (SELECT s.last_offset, s.created_at FROM queen.log_segments s
                          WHERE s.partition_id = ids.id
                          ORDER BY s.last_offset DESC LIMIT 1) h
     WHERE p.id = ids.id AND p.last_offset < h.last_offset
       AND EXISTS (SELECT 1 FROM unnest(p_partition_ids, p_last_offsets) AS d(id, off)
                    WHERE d.id = ids.id AND d.off = h.last_offset)
$$;
COMMENT ON FUNCTION queen.raise_partition_floors(bigint[], bigint[]) IS
  'Before segments are deleted: where a partition''s newest is among them, records its head as the floor.';

-- queen.require_read_committed(operation): refuses (SQLSTATE 0A000) an offset-allocating call
-- in a transaction whose snapshot is not renewed per statement (REPEATABLE READ,
-- SERIALIZABLE): its head reads could miss a push committed while it waited for a lock.
CREATE OR REPLACE FUNCTION queen.require_read_committed(p_operation text)
RETURNS void
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION '% needs READ COMMITTED isolation, not %', p_operation,
              upper(current_setting('transaction_isolation'))
              USING ERRCODE = '0A000',
                    HINT = 'Offsets continue from the newest segment, read after the partition lock; '
                           'run it in a READ COMMITTED transaction.';
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.require_read_committed(text) IS
  'Refuses an offset-allocating call outside READ COMMITTED isolation.';

-- queen.delete_segments(partitions, last_offsets): deletes these segments (retention), first
-- recording the head of every partition whose newest segment is among them as its floor.
-- Returns the number deleted; NULL arrays delete nothing.
CREATE OR REPLACE FUNCTION queen.delete_segments(p_partition_ids bigint[], p_last_offsets bigint[])
RETURNS bigint
LANGUAGE plpgsql
AS $$
DECLARE
    v_deleted bigint;
BEGIN
    IF p_partition_ids IS NULL THEN
        RETURN 0;
    END IF;
    PERFORM queen.raise_partition_floors(p_partition_ids, p_last_offsets);
    -- A segment's tombstones (44_tombstones.sql) go with it.
    WITH gone AS (
        DELETE FROM queen.log_segments s
         USING unnest(p_partition_ids, p_last_offsets) AS d(id, off)
         WHERE s.partition_id = d.id AND s.last_offset = d.off
        RETURNING s.partition_id, s.first_offset, s.last_offset
    ), tombstones AS (
        DELETE FROM queen.message_tombstones t USING gone g
         WHERE t.partition_id = g.partition_id AND t.msg_offset BETWEEN g.first_offset AND g.last_offset
    )
    SELECT count(*) INTO v_deleted FROM gone;
    RETURN v_deleted;
END;
$$;
COMMENT ON FUNCTION queen.delete_segments(bigint[], bigint[]) IS
  'Deletes segments with their tombstones, keeping each emptied partition''s head as its floor.';
