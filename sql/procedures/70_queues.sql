-- queen.delete_queue(name): removes a queue with its partitions, segments, cursors,
-- dedup entries, dead letters and consumer-group metadata. Returns whether it existed.

CREATE OR REPLACE FUNCTION queen.delete_queue(p_name text)
RETURNS boolean
LANGUAGE plpgsql
AS $$
DECLARE
    v_id bigint;
BEGIN
    SELECT id INTO v_id FROM queen.queues WHERE name = p_name FOR UPDATE;
    DELETE FROM queen.consumer_groups WHERE queue_name = p_name;
    IF v_id IS NULL THEN
        RETURN false;
    END IF;
    DELETE FROM queen.log_segments s USING queen.log_partitions p
     WHERE p.queue_id = v_id AND s.partition_id = p.id;
    DELETE FROM queen.log_dedup d USING queen.log_partitions p
     WHERE p.queue_id = v_id AND d.partition_id = p.id;
    DELETE FROM queen.log_consumers WHERE queue_id = v_id;
    DELETE FROM queen.dead_letters WHERE queue_id = v_id;
    DELETE FROM queen.log_partitions WHERE queue_id = v_id;
    DELETE FROM queen.queues WHERE id = v_id;
    RETURN true;
END;
$$;
COMMENT ON FUNCTION queen.delete_queue(text) IS
  'Deletes a queue and everything stored for it; true when it existed.';
