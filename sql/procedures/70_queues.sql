-- Queues as a whole.
-- queen.delete_queue(name): removes a queue with its partitions, segments, cursors,
--   dedup entries, tombstones, dead letters, consumer-group metadata and the stream state of its
--   partitions (docs/streams.md). Returns whether it existed.
-- queen.queue_encryption(names): encryptionEnabled per name (false for an unknown queue).
-- queen.database_health(): the server version and queen_ext's version (NULL without it),
--   in one round trip that proves the database answers.

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
    DELETE FROM queen.message_tombstones t USING queen.log_partitions p
     WHERE p.queue_id = v_id AND t.partition_id = p.id;
    DELETE FROM queen.stream_state s USING queen.stream_lanes l, queen.log_partitions p
     WHERE p.queue_id = v_id AND l.partition_id = p.id
       AND s.query_id = l.query_id AND s.partition_id = l.partition_id;
    DELETE FROM queen.stream_lanes l USING queen.log_partitions p
     WHERE p.queue_id = v_id AND l.partition_id = p.id;
    DELETE FROM queen.log_consumers WHERE queue_id = v_id;
    DELETE FROM queen.claim_floors WHERE queue_id = v_id;
    DELETE FROM queen.dead_letters WHERE queue_id = v_id;
    DELETE FROM queen.log_partitions WHERE queue_id = v_id;
    DELETE FROM queen.queues WHERE id = v_id;
    RETURN true;
END;
$$;
COMMENT ON FUNCTION queen.delete_queue(text) IS
  'Deletes a queue and everything stored for it; true when it existed.';

CREATE OR REPLACE FUNCTION queen.queue_encryption(p_names text[])
RETURNS TABLE(queue text, encryption_enabled boolean)
LANGUAGE sql STABLE
AS $$
    SELECT n, coalesce(q.encryption_enabled, false)
      FROM unnest(p_names) AS n
      LEFT JOIN queen.queues q ON q.name = n
$$;
COMMENT ON FUNCTION queen.queue_encryption(text[]) IS
  'encryptionEnabled of each named queue; false for a queue that does not exist.';

CREATE OR REPLACE FUNCTION queen.database_health()
RETURNS TABLE(server_version text, extension_version text)
LANGUAGE sql STABLE
AS $$
    SELECT current_setting('server_version'), queen.codec_extension()
$$;
COMMENT ON FUNCTION queen.database_health() IS
  'The server version and the installed queen_ext version (NULL without it).';
