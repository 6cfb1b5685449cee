-- Queue and partition rows.
-- queen.ensure_queue(name): the queue's id, creating it with default options if missing.
-- queen.ensure_partition(queue_id, name): the partition's id, creating it if missing,
--   together with a cursor row for every consumer group already registered on the queue.
-- Lock order: a new partition takes its queue row FOR SHARE before it is inserted, and a
-- group's registration (50_groups.sql) takes the queue row FOR UPDATE, so a partition created
-- concurrently with a group's first pop always gets a cursor for that group. A queue that
-- does not exist yet has no row to lock: its creation and a registration both take the
-- transaction advisory lock queen.queue_lock_key(name) instead.

-- queen.queue_advisory_key(tag, name): the one formula of every per-queue advisory lock key:
-- a 16-bit tag (which lock) in the top bits, the queue name's hash in the low 32.
CREATE OR REPLACE FUNCTION queen.queue_advisory_key(p_tag integer, p_name text)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT (p_tag::bigint << 48) | (hashtext(p_name)::bigint & x'ffffffff'::bigint) $$;
COMMENT ON FUNCTION queen.queue_advisory_key(integer, text) IS
  'Advisory lock key of a per-queue lock: a 16-bit tag and the queue name''s hash.';

-- queen.queue_lock_key(name): the transaction advisory lock key that orders the creation of
-- a queue with the registration of a consumer group on it.
CREATE OR REPLACE FUNCTION queen.queue_lock_key(p_name text)
RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT queen.queue_advisory_key(x'5155'::integer, p_name) $$;
COMMENT ON FUNCTION queen.queue_lock_key(text) IS
  'Advisory lock key ordering a queue''s creation with a group''s first pop on it.';

CREATE OR REPLACE FUNCTION queen.ensure_queue(p_name text)
RETURNS bigint
LANGUAGE plpgsql
AS $$
DECLARE
    v_id bigint;
BEGIN
    SELECT id INTO v_id FROM queen.queues WHERE name = p_name;
    IF FOUND THEN
        RETURN v_id;
    END IF;
    -- Serializes with a group's first pop of a queue that does not exist yet (50_groups.sql).
    PERFORM pg_advisory_xact_lock(queen.queue_lock_key(p_name));
    INSERT INTO queen.queues (name) VALUES (p_name) ON CONFLICT (name) DO NOTHING RETURNING id INTO v_id;
    IF v_id IS NULL THEN
        SELECT id INTO v_id FROM queen.queues WHERE name = p_name;
    END IF;
    RETURN v_id;
END;
$$;
COMMENT ON FUNCTION queen.ensure_queue(text) IS
  'Id of the named queue, created with default options when missing.';

CREATE OR REPLACE FUNCTION queen.ensure_partition(p_queue_id bigint, p_name text)
RETURNS bigint
LANGUAGE plpgsql
AS $$
DECLARE
    v_id bigint;
BEGIN
    SELECT id INTO v_id FROM queen.log_partitions WHERE queue_id = p_queue_id AND name = p_name;
    IF FOUND THEN
        RETURN v_id;
    END IF;
    PERFORM 1 FROM queen.queues WHERE id = p_queue_id FOR SHARE;
    INSERT INTO queen.log_partitions (queue_id, name) VALUES (p_queue_id, p_name)
    ON CONFLICT (queue_id, name) DO NOTHING
    RETURNING id INTO v_id;
    IF v_id IS NULL THEN
        SELECT id INTO v_id FROM queen.log_partitions WHERE queue_id = p_queue_id AND name = p_name;
        RETURN v_id;
    END IF;
    -- A new partition holds nothing older than any registered group's start.
    INSERT INTO queen.log_consumers (partition_id, consumer_group, queue_id, committed)
    SELECT v_id, g.consumer_group, p_queue_id, 0
      FROM queen.consumer_groups g
      JOIN queen.queues q ON q.name = g.queue_name
     WHERE q.id = p_queue_id
    ON CONFLICT DO NOTHING;
    RETURN v_id;
END;
$$;
COMMENT ON FUNCTION queen.ensure_partition(bigint, text) IS
  'Id of the partition, created when missing with a cursor for every registered group.';
