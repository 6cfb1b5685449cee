-- Moving a logical shard from one shard database to another (`queen shards move`,
-- docs/scaling.md, "Moving a logical shard"). In order:
--   1. the source fences the shard (queen.fence_shard): its rows refuse every write (QNMOV),
--      which the broker answers by spooling pushes and keeping long-polls parked;
--   2. the target imports its rows (queen.shard_export on the source, queen.shard_import here)
--      and adopts it (queen.shard_adopt), in one transaction;
--   3. the proxies are repointed (queen.repoint_shard);
--   4. the source deletes its rows and stops hosting it (queen.shard_release), then lifts the
--      fence (queen.unfence_shard).
-- The session setting queen.shard_move = on (set by these functions, for their transaction)
-- lets a move's own writes past the fence and keeps imported ids as they were.

-- queen.shard_tables(): the tables holding a logical shard's state, in the order an import
-- needs them (stream lanes name their query; a cursor's ready_at is computed from the
-- segments), with the column naming each row's partition. Rows without one (queues, group
-- registrations, stream queries) are every shard's alike and copied whole; `fenced` says
-- whether the fence refuses writes to the table.
CREATE OR REPLACE FUNCTION queen.shard_tables()
RETURNS TABLE(ord integer, table_name text, partition_column text, fenced boolean)
LANGUAGE sql IMMUTABLE
AS $$
    VALUES (1, 'queues', NULL, true),
           (2, 'consumer_groups', NULL, false),
           (3, 'stream_queries', NULL, true),
           (4, 'log_partitions', 'id', true),
           (5, 'log_segments', 'partition_id', true),
           (6, 'log_dedup', 'partition_id', true),
           (7, 'message_tombstones', 'partition_id', true),
           (8, 'log_consumers', 'partition_id', true),
           (9, 'dead_letters', 'partition_id', true),
           (10, 'message_traces', 'partition_id', true),
           (11, 'stream_lanes', 'partition_id', true),
           (12, 'stream_state', 'partition_id', true),
           (13, 'shard_receipts', 'partition_id', true)
$$;
COMMENT ON FUNCTION queen.shard_tables() IS
  'Tables a logical shard''s move copies, in import order, with their partition column.';

-- queen.refuse_fenced_rows(): BEFORE INSERT/UPDATE/DELETE trigger on the fenced tables while a
-- move is under way: a row of a fenced logical shard (TG_ARGV[0] names its partition column;
-- '' for the tables copied whole, whose every row is refused) raises QNMOV. Registrations are
-- not fenced: pops update them, and the move copies them again before it ends.
CREATE OR REPLACE FUNCTION queen.refuse_fenced_rows()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_identity queen.shard_identity;
    v_row      record;
    v_id       bigint;
BEGIN
    IF TG_OP = 'DELETE' THEN
        v_row := OLD;
    ELSE
        v_row := NEW;
    END IF;
    IF current_setting('queen.shard_move', true) = 'on' THEN
        RETURN v_row;
    END IF;
    SELECT * INTO v_identity FROM queen.shard_identity;
    IF NOT FOUND OR cardinality(v_identity.fenced) = 0 THEN
        RETURN v_row;
    END IF;
    IF TG_ARGV[0] = '' THEN
        RAISE EXCEPTION 'logical shard % is moving to another database and % cannot change until it has; retry in a moment',
              v_identity.fenced[1], TG_TABLE_NAME USING ERRCODE = 'QNMOV';
    END IF;
    IF TG_ARGV[0] = 'id' THEN
        v_id := v_row.id;
    ELSE
        v_id := v_row.partition_id;
    END IF;
    IF (v_id & (v_identity.logical_shards - 1)) = ANY (v_identity.fenced) THEN
        RAISE EXCEPTION 'logical shard % is moving to another database; retry in a moment',
              v_id & (v_identity.logical_shards - 1) USING ERRCODE = 'QNMOV';
    END IF;
    RETURN v_row;
END;
$$;
COMMENT ON FUNCTION queen.refuse_fenced_rows() IS
  'Trigger during a move: writes to a fenced logical shard''s rows raise QNMOV.';

-- queen.shard_identity_for_move(shard, must_host): this database's shard identity, refusing
-- (QN409) a database that is not a shard, or one that does not host the shard when it must.
CREATE OR REPLACE FUNCTION queen.shard_identity_for_move(p_shard integer, p_must_host boolean)
RETURNS queen.shard_identity
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v queen.shard_identity;
BEGIN
    SELECT * INTO v FROM queen.shard_identity;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'database % is not a shard', current_database() USING ERRCODE = 'QN409';
    END IF;
    IF p_shard IS NULL OR p_shard < 0 OR p_shard >= v.logical_shards THEN
        RAISE EXCEPTION 'logical shard must lie in 0..%, not %', v.logical_shards - 1, p_shard USING ERRCODE = 'QN400';
    END IF;
    IF p_must_host AND p_shard <> ALL (v.hosted) THEN
        RAISE EXCEPTION 'database % does not host logical shard %', current_database(), p_shard USING ERRCODE = 'QN409';
    END IF;
    RETURN v;
END;
$$;

-- queen.fence_shard(shard): from its commit on, writes to the shard's rows here raise QNMOV.
-- Creating the triggers waits for every transaction writing these tables to end, so once it
-- returns no write begun before it is still under way. The tables are locked first, in one
-- statement, as the procedure files' triggers are (05_trigger_table_locks.sql); the caller
-- sets a lock_timeout and retries, so traffic never waits long behind it.
CREATE OR REPLACE FUNCTION queen.fence_shard(p_shard integer)
RETURNS integer[]
LANGUAGE plpgsql
AS $$
DECLARE
    v queen.shard_identity;
    t record;
BEGIN
    LOCK TABLE queen.shard_identity IN EXCLUSIVE MODE;
    v := queen.shard_identity_for_move(p_shard, true);
    LOCK TABLE queen.queues, queen.stream_queries, queen.log_partitions, queen.log_segments, queen.log_dedup,
               queen.message_tombstones, queen.log_consumers, queen.dead_letters, queen.message_traces,
               queen.stream_lanes, queen.stream_state, queen.shard_receipts
        IN SHARE ROW EXCLUSIVE MODE;
    FOR t IN SELECT * FROM queen.shard_tables() s WHERE s.fenced ORDER BY s.ord LOOP
        EXECUTE format('CREATE OR REPLACE TRIGGER shard_fence BEFORE INSERT OR UPDATE OR DELETE ON queen.%I '
                       'FOR EACH ROW EXECUTE FUNCTION queen.refuse_fenced_rows(%L)',
                       t.table_name, coalesce(t.partition_column, ''));
    END LOOP;
    UPDATE queen.shard_identity SET fenced = ARRAY(SELECT DISTINCT f FROM unnest(fenced || p_shard) AS f ORDER BY f)
    RETURNING fenced INTO v.fenced;
    RETURN v.fenced;
END;
$$;
COMMENT ON FUNCTION queen.fence_shard(integer) IS
  'Starts a move: writes to the logical shard''s rows here raise QNMOV from the commit on.';

-- queen.unfence_shard(shard): the shard's rows take writes again; with no fence left, the
-- triggers go.
CREATE OR REPLACE FUNCTION queen.unfence_shard(p_shard integer)
RETURNS integer[]
LANGUAGE plpgsql
AS $$
DECLARE
    v_left integer[];
    t      record;
BEGIN
    LOCK TABLE queen.shard_identity IN EXCLUSIVE MODE;
    UPDATE queen.shard_identity SET fenced = array_remove(fenced, p_shard) RETURNING fenced INTO v_left;
    IF coalesce(cardinality(v_left), 0) = 0 THEN
        FOR t IN SELECT * FROM queen.shard_tables() s WHERE s.fenced ORDER BY s.ord LOOP
            EXECUTE format('DROP TRIGGER IF EXISTS shard_fence ON queen.%I', t.table_name);
        END LOOP;
    END IF;
    RETURN coalesce(v_left, '{}');
END;
$$;
COMMENT ON FUNCTION queen.unfence_shard(integer) IS
  'Ends a move''s fence of a logical shard here (the triggers go with the last fence).';

-- queen.shard_export(shard, table, after, limit): the next rows of one table the shard's move
-- copies (queen.shard_tables), as row literals, in physical order after the row `after`
-- (NULL: from the start), at most p_limit. The tables without a partition column are copied
-- whole. A move pages through each table with the last row_tid it got; the fence keeps the
-- rows still meanwhile.
CREATE OR REPLACE FUNCTION queen.shard_export(p_shard integer, p_table text, p_after tid, p_limit integer)
RETURNS TABLE(row_tid tid, row_text text)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v queen.shard_identity;
    t record;
BEGIN
    v := queen.shard_identity_for_move(p_shard, true);
    SELECT * INTO t FROM queen.shard_tables() s WHERE s.table_name = p_table;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'a move copies no table %', p_table USING ERRCODE = 'QN400';
    END IF;
    RETURN QUERY EXECUTE format('SELECT r.ctid, r::text FROM queen.%I r WHERE r.ctid > $3 %s ORDER BY r.ctid LIMIT $4',
                                t.table_name,
                                CASE WHEN t.partition_column IS NOT NULL
                                     THEN format('AND (r.%I & $1) = $2', t.partition_column) ELSE '' END)
        USING v.logical_shards - 1, p_shard, coalesce(p_after, '(0,0)'::tid), p_limit;
END;
$$;
COMMENT ON FUNCTION queen.shard_export(integer, text, tid, integer) IS
  'A page of a move''s rows of one table, as row literals, after a row (physical order).';

-- queen.shard_import(table, rows): inserts exported row literals of one table here, in the
-- move's transaction. Queues are matched by name (each database numbers its own; the source's
-- ids are mapped to this database's in a temporary table of the transaction) and those this
-- database has keep their configuration; registrations and stream queries it has are kept.
-- Partition, dead-letter, trace and cursor rows keep their ids. Returns the rows inserted.
CREATE OR REPLACE FUNCTION queen.shard_import(p_table text, p_rows text[])
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_row      text := format('x::queen.%I', p_table);
    v_from     text := 'unnest($1) AS x';
    v_conflict text := '';
    v_cols     text;
    v_vals     text;
    n          integer;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM queen.shard_tables() s WHERE s.table_name = p_table) THEN
        RAISE EXCEPTION 'a move copies no table %', p_table USING ERRCODE = 'QN400';
    END IF;
    PERFORM set_config('queen.shard_move', 'on', true);
    IF to_regclass('pg_temp.shard_import_queues') IS NULL THEN
        CREATE TEMP TABLE shard_import_queues (source_id bigint PRIMARY KEY, target_id bigint NOT NULL) ON COMMIT DROP;
    END IF;
    -- Generated columns are computed here again.
    SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum),
           string_agg('(s.r).' || quote_ident(a.attname), ', ' ORDER BY a.attnum)
      INTO v_cols, v_vals
      FROM pg_attribute a
     WHERE a.attrelid = format('queen.%I', p_table)::regclass AND a.attnum > 0 AND NOT a.attisdropped
       AND a.attgenerated = '';
    IF p_table = 'queues' THEN
        v_row := format('jsonb_populate_record(%s, jsonb_build_object(''id'', nextval(%L)))', v_row,
                        pg_get_serial_sequence('queen.queues', 'id'));
        v_conflict := 'ON CONFLICT (name) DO NOTHING';
    ELSIF p_table IN ('consumer_groups', 'stream_queries') THEN
        v_conflict := 'ON CONFLICT DO NOTHING';
    ELSIF p_table IN ('log_partitions', 'log_consumers', 'dead_letters') THEN
        v_from := v_from || format(' JOIN pg_temp.shard_import_queues m ON m.source_id = (%s).queue_id', v_row);
        v_row := format('jsonb_populate_record(%s, jsonb_build_object(''queue_id'', m.target_id))', v_row);
    END IF;
    EXECUTE format('INSERT INTO queen.%I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM (SELECT %s AS r FROM %s) s %s',
                   p_table, v_cols, v_vals, v_row, v_from, v_conflict) USING p_rows;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF p_table = 'queues' THEN
        INSERT INTO shard_import_queues (source_id, target_id)
        SELECT (x::queen.queues).id, q.id FROM unnest(p_rows) AS x JOIN queen.queues q ON q.name = (x::queen.queues).name
        ON CONFLICT (source_id) DO NOTHING;
    ELSIF p_table IN ('log_partitions', 'dead_letters') AND n <> cardinality(p_rows) THEN
        RAISE EXCEPTION '% of % % rows name queues the move did not copy', cardinality(p_rows) - n,
              cardinality(p_rows), p_table USING ERRCODE = 'QN409';
    END IF;
    RETURN n;
END;
$$;
COMMENT ON FUNCTION queen.shard_import(text, text[]) IS
  'Inserts a move''s exported rows of one table (queues matched by name, other ids kept).';

-- queen.shard_adopt(shard): after its rows were imported, this database hosts the shard: new
-- partition and dead-letter ids drawn here come after the imported ones (an id is its sequence
-- value × logical shards + its shard), the imported cursors' groups have their claim floors
-- reset (the cursors may wait on messages older than a floor raised here), and lease ids made
-- here name the shard. Returns the hosted shards.
CREATE OR REPLACE FUNCTION queen.shard_adopt(p_shard integer)
RETURNS integer[]
LANGUAGE plpgsql
AS $$
DECLARE
    v      queen.shard_identity;
    v_mask integer;
    v_seq  text;
    g      record;
BEGIN
    LOCK TABLE queen.shard_identity IN EXCLUSIVE MODE;
    v := queen.shard_identity_for_move(p_shard, false);
    v_mask := v.logical_shards - 1;
    v_seq := pg_get_serial_sequence('queen.log_partitions', 'id');
    PERFORM setval(v_seq, greatest(nextval(v_seq), (SELECT max(id) / v.logical_shards + 1 FROM queen.log_partitions
                                                     WHERE (id & v_mask) = p_shard)));
    v_seq := pg_get_serial_sequence('queen.dead_letters', 'id');
    PERFORM setval(v_seq, greatest(nextval(v_seq), (SELECT max(id) / v.logical_shards + 1 FROM queen.dead_letters
                                                     WHERE (partition_id & v_mask) = p_shard)));
    FOR g IN SELECT DISTINCT q.name, c.consumer_group
               FROM queen.log_consumers c JOIN queen.queues q ON q.id = c.queue_id
              WHERE (c.partition_id & v_mask) = p_shard LOOP
        PERFORM queen.reset_claim_floor(g.name, g.consumer_group);
    END LOOP;
    IF p_shard <> ALL (v.hosted) THEN
        PERFORM queen.become_shard(v.logical_shards, v.hosted || p_shard);
        v.hosted := v.hosted || p_shard;
    END IF;
    RETURN v.hosted;
END;
$$;
COMMENT ON FUNCTION queen.shard_adopt(integer) IS
  'Ends a move''s import: this database hosts the logical shard (ids, claim floors, lease ids).';

-- queen.shard_release(shard): after the proxies were repointed, the source deletes the
-- shard's rows (past its own fence) and stops hosting it. The fence stays until
-- queen.unfence_shard, so a call still routed here by an old mapping is refused, not stored.
-- Returns the partitions deleted.
CREATE OR REPLACE FUNCTION queen.shard_release(p_shard integer)
RETURNS bigint
LANGUAGE plpgsql
AS $$
DECLARE
    v     queen.shard_identity;
    t     record;
    v_out bigint;
BEGIN
    LOCK TABLE queen.shard_identity IN EXCLUSIVE MODE;
    v := queen.shard_identity_for_move(p_shard, false);
    PERFORM set_config('queen.shard_move', 'on', true);
    FOR t IN SELECT * FROM queen.shard_tables() s WHERE s.partition_column IS NOT NULL AND s.table_name <> 'log_partitions'
              ORDER BY s.ord DESC LOOP
        EXECUTE format('DELETE FROM queen.%I r WHERE (r.%I & $1) = $2', t.table_name, t.partition_column)
            USING v.logical_shards - 1, p_shard;
    END LOOP;
    DELETE FROM queen.log_partitions p WHERE (p.id & (v.logical_shards - 1)) = p_shard;
    GET DIAGNOSTICS v_out = ROW_COUNT;
    IF p_shard = ANY (v.hosted) THEN
        PERFORM queen.become_shard(v.logical_shards, array_remove(v.hosted, p_shard));
    END IF;
    RETURN v_out;
END;
$$;
COMMENT ON FUNCTION queen.shard_release(integer) IS
  'Ends a move on its source: the logical shard''s rows deleted, the shard no longer hosted.';

-- queen.shard_partition_count(shard): how many partitions of the shard this database holds
-- (a move checks that its target holds none before it starts).
CREATE OR REPLACE FUNCTION queen.shard_partition_count(p_shard integer)
RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT count(*) FROM queen.log_partitions p, queen.shard_identity si
     WHERE (p.id & (si.logical_shards - 1)) = p_shard
$$;
COMMENT ON FUNCTION queen.shard_partition_count(integer) IS
  'Partitions of a logical shard held here.';

-- queen.shard_hosting(): this shard's logical-shard count and hosted shards (no row: not a shard).
CREATE OR REPLACE FUNCTION queen.shard_hosting()
RETURNS TABLE(logical_shards integer, hosted integer[])
LANGUAGE sql STABLE
AS $$ SELECT si.logical_shards, si.hosted FROM queen.shard_identity si $$;
COMMENT ON FUNCTION queen.shard_hosting() IS
  'This shard''s logical-shard count and the logical shards it hosts; no row on a database that is not a shard.';
