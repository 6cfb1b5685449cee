-- A database as one shard of a sharded deployment (docs/scaling.md): what makes it one
-- (queen.become_shard, called by `queen shards init` on every shard), where a partition
-- lives (its logical shard, in the low bits of its id), and what the proxy reads from it
-- (signatures, status). Each operation's shard-side part (queen.push_part, queen.ack_part, …)
-- lives with the operation; sql/operations.json names them.
-- Lock order: no function here takes a row lock; the id triggers run inside their insert.

-- queen.partition_shard(queue, partition): the logical shard of a partition on this shard,
-- NULL when this database is not a shard.
CREATE OR REPLACE FUNCTION queen.partition_shard(p_queue text, p_partition text)
RETURNS integer
LANGUAGE sql STABLE
AS $$
    SELECT queen.partition_hash(p_queue, p_partition) & (si.logical_shards - 1) FROM queen.shard_identity si
$$;
COMMENT ON FUNCTION queen.partition_shard(text, text) IS
  'Logical shard of a (queue key, partition) on a shard; NULL on a database that is not a shard.';

-- queen.partition_hosted(queue, partition): whether this database holds that partition: every
-- partition on one database, only its hosted logical shards' on a shard.
CREATE OR REPLACE FUNCTION queen.partition_hosted(p_queue text, p_partition text)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT coalesce((SELECT queen.partition_shard(p_queue, p_partition) = ANY (si.hosted) FROM queen.shard_identity si),
                    true)
$$;
COMMENT ON FUNCTION queen.partition_hosted(text, text) IS
  'Whether this database holds the partition (always, unless it is a shard hosting other logical shards).';

-- queen.partition_id_with_shard(): BEFORE INSERT on queen.log_partitions of a shard. The id
-- drawn from the sequence becomes id * logical_shards + the partition's logical shard, so a
-- partition id names its shard (acks, seeks and traces route by id, with no lookup). A
-- partition of a logical shard this database does not host is refused (QN409): a call was
-- routed to the wrong shard, and storing it here would hide it from every reader. A move's
-- import (88_shard_moves.sql) inserts partitions with the ids they have.
CREATE OR REPLACE FUNCTION queen.partition_id_with_shard()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_identity queen.shard_identity;
    v_queue    text;
    v_shard    integer;
BEGIN
    SELECT * INTO v_identity FROM queen.shard_identity;
    IF NOT FOUND OR current_setting('queen.shard_move', true) = 'on' THEN  -- a move's import keeps its ids
        RETURN NEW;
    END IF;
    SELECT name INTO v_queue FROM queen.queues WHERE id = NEW.queue_id;
    v_shard := queen.partition_hash(v_queue, NEW.name) & (v_identity.logical_shards - 1);
    IF v_shard <> ALL (v_identity.hosted) THEN
        RAISE EXCEPTION 'partition % of queue % belongs to logical shard %, which this database does not host',
              NEW.name, queen.queue_local_name(v_queue), v_shard USING ERRCODE = 'QN409';
    END IF;
    NEW.id := NEW.id * v_identity.logical_shards + v_shard;
    RETURN NEW;
END;
$$;
COMMENT ON FUNCTION queen.partition_id_with_shard() IS
  'Trigger of a shard: a new partition id carries its logical shard in its low bits; other shards'' refused.';

-- queen.dead_letter_id_with_shard(): BEFORE INSERT on queen.dead_letters of a shard: the id
-- carries its partition's logical shard in its low bits, as partition ids do, so dead-letter
-- ids are distinct across shards and name their shard.
CREATE OR REPLACE FUNCTION queen.dead_letter_id_with_shard()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_n integer;
BEGIN
    SELECT logical_shards INTO v_n FROM queen.shard_identity;
    IF v_n IS NOT NULL AND current_setting('queen.shard_move', true) IS DISTINCT FROM 'on' THEN
        NEW.id := NEW.id * v_n + (NEW.partition_id & (v_n - 1));
    END IF;
    RETURN NEW;
END;
$$;
COMMENT ON FUNCTION queen.dead_letter_id_with_shard() IS
  'Trigger of a shard: a new dead-letter id carries its partition''s logical shard in its low bits.';

-- queen.stream_query_id_by_name(): BEFORE INSERT on queen.stream_queries of a shard: the
-- query id is derived from its name (md5 as a UUID), so every shard registering the query
-- through the proxy gives it the same id.
CREATE OR REPLACE FUNCTION queen.stream_query_id_by_name()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM queen.shard_identity) THEN
        NEW.id := md5('queen stream query ' || NEW.name)::uuid;
    END IF;
    RETURN NEW;
END;
$$;
COMMENT ON FUNCTION queen.stream_query_id_by_name() IS
  'Trigger of a shard: a stream query''s id derived from its name, alike on every shard.';

-- queen.become_shard(logical_shards, hosted): makes this database a shard hosting those
-- logical shards (idempotent; the hosted list is replaced), whose new partition and
-- dead-letter ids carry their logical shard, whose lease ids name its hosted shards and
-- whose stream query ids follow their names. Refused (QN409) when it is already
-- a shard with another count, or when it holds partitions from before, whose ids would not
-- name their shard.
CREATE OR REPLACE FUNCTION queen.become_shard(p_logical_shards integer, p_hosted integer[])
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_now integer;
BEGIN
    LOCK TABLE queen.shard_identity IN EXCLUSIVE MODE;
    SELECT logical_shards INTO v_now FROM queen.shard_identity;
    IF v_now IS NOT NULL AND v_now <> p_logical_shards THEN
        RAISE EXCEPTION 'this database is already a shard of % logical shards, not %', v_now, p_logical_shards
              USING ERRCODE = 'QN409';
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(p_hosted) AS h WHERE h IS NULL OR h < 0 OR h >= p_logical_shards) THEN
        RAISE EXCEPTION 'hosted logical shards must lie in 0..%', p_logical_shards - 1 USING ERRCODE = 'QN400';
    END IF;
    IF v_now IS NULL THEN
        IF EXISTS (SELECT 1 FROM queen.log_partitions) THEN
            RAISE EXCEPTION 'this database already holds partitions; a shard must start empty'
                  USING ERRCODE = 'QN409';
        END IF;
        INSERT INTO queen.shard_identity (logical_shards, hosted) VALUES (p_logical_shards, p_hosted);
    ELSE
        UPDATE queen.shard_identity SET hosted = p_hosted;
    END IF;
    -- New sessions' lease ids name the hosted shards (54_lease_ids.sql); this one's too.
    EXECUTE format('ALTER DATABASE %I SET queen.lease_shards = %L', current_database(),
                   queen.lease_shard_mask(p_hosted));
    PERFORM set_config('queen.lease_shards', queen.lease_shard_mask(p_hosted), false);
    CREATE OR REPLACE TRIGGER partition_id_with_shard BEFORE INSERT ON queen.log_partitions
        FOR EACH ROW EXECUTE FUNCTION queen.partition_id_with_shard();
    CREATE OR REPLACE TRIGGER dead_letter_id_with_shard BEFORE INSERT ON queen.dead_letters
        FOR EACH ROW EXECUTE FUNCTION queen.dead_letter_id_with_shard();
    CREATE OR REPLACE TRIGGER stream_query_id_by_name BEFORE INSERT ON queen.stream_queries
        FOR EACH ROW EXECUTE FUNCTION queen.stream_query_id_by_name();
    RETURN p_logical_shards;
END;
$$;
COMMENT ON FUNCTION queen.become_shard(integer, integer[]) IS
  'Makes this database a shard hosting those logical shards (partition ids carry their shard).';

-- queen.api_signatures(names): how each named queen.* function is declared here, for the
-- proxy's generator (sql/shards/02_generator.sql), which gives its functions the same.
CREATE OR REPLACE FUNCTION queen.api_signatures(p_names text[])
RETURNS TABLE(name text, arguments text, argument_names text[], result text, returns_set boolean,
              returns_table boolean)
LANGUAGE sql STABLE
AS $$
    SELECT p.proname::text, pg_get_function_arguments(p.oid),
           (SELECT array_agg(a.n ORDER BY a.i)
              FROM unnest(p.proargnames, coalesce(p.proargmodes, array_fill('i'::"char", ARRAY[p.pronargs])))
                   WITH ORDINALITY AS a(n, m, i)
             WHERE a.m IN ('i', 'b', 'v')),
           pg_get_function_result(p.oid), p.proretset, pg_get_function_result(p.oid) LIKE 'TABLE(%'
      FROM pg_proc p
     WHERE p.pronamespace = 'queen'::regnamespace AND p.proname = ANY (p_names)
$$;
COMMENT ON FUNCTION queen.api_signatures(text[]) IS
  'Declared arguments and results of the named queen.* functions (the shard proxy copies them).';

-- queen.shard_status(): this shard's share, for `queen shards status` (through the proxy).
-- Messages are those the segments hold (retention removes whole segments).
CREATE OR REPLACE FUNCTION queen.shard_status()
RETURNS TABLE(database text, port integer, logical_shards integer, partitions bigint, messages bigint, bytes bigint)
LANGUAGE sql STABLE
AS $$
    SELECT current_database()::text, inet_server_port(), (SELECT logical_shards FROM queen.shard_identity),
           (SELECT count(*) FROM queen.log_partitions),
           (SELECT coalesce(sum(s.last_offset - s.first_offset + 1), 0)::bigint FROM queen.log_segments s),
           pg_database_size(current_database())
$$;
COMMENT ON FUNCTION queen.shard_status() IS
  'This shard database''s partitions, stored messages and size (queen shards status).';
