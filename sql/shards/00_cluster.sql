-- The proxy database of a sharded deployment (docs/scaling.md): PL/Proxy, the cluster of
-- shard databases, and what the generator (02_generator.sql) needs. Applied by
-- `queen shards init`, in file order, every time (idempotent).
CREATE EXTENSION IF NOT EXISTS plproxy;
CREATE SCHEMA IF NOT EXISTS queen_proxy;
-- dblink: what the proxy runs on each shard database outside PL/Proxy (a procedure that commits).
CREATE EXTENSION IF NOT EXISTS dblink SCHEMA queen_proxy;
CREATE SCHEMA IF NOT EXISTS queen;

-- The (queue, group) pairs this proxy registered on every shard in the last minute
-- (queen_proxy.register_everywhere): a cache, so a pop registers its group once, not each time.
CREATE TABLE IF NOT EXISTS queen_proxy.registered_groups (
    queue_name     text NOT NULL,
    consumer_group text NOT NULL,
    checked_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue_name, consumer_group)
);

-- The moves of logical shards under way (`queen shards move`), so that the same command run
-- again after an interruption knows the source it left fenced.
CREATE TABLE IF NOT EXISTS queen_proxy.shard_moves (
    logical_shard integer PRIMARY KEY,
    source        text NOT NULL,
    target        text NOT NULL,
    started_at    timestamptz NOT NULL DEFAULT now()
);

-- queen_proxy.configure_cluster(shards, logical_shards): the PL/Proxy cluster queen_shards,
-- logical shard i on shards[i % n + 1]. Creating it again with the same databases changes
-- nothing, whichever logical shards moves have put on each; another list or count is refused
-- (moving shards is `queen shards move`, not init).
CREATE OR REPLACE FUNCTION queen_proxy.configure_cluster(p_shards text[], p_logical_shards integer)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_wanted text[];
    v_now    text[];
BEGIN
    IF p_logical_shards < 1 OR (p_logical_shards & (p_logical_shards - 1)) <> 0 THEN
        RAISE EXCEPTION 'logical shards must be a power of 2, not %', p_logical_shards USING ERRCODE = 'QN400';
    END IF;
    IF cardinality(p_shards) < 1 OR cardinality(p_shards) > p_logical_shards THEN
        RAISE EXCEPTION 'between 1 and % shard databases, not %', p_logical_shards, cardinality(p_shards)
              USING ERRCODE = 'QN400';
    END IF;
    SELECT array_agg(format('p%s=%s', i, p_shards[i % cardinality(p_shards) + 1]) ORDER BY i)
      INTO v_wanted FROM generate_series(0, p_logical_shards - 1) AS i;
    SELECT array_agg(o ORDER BY substring(o FROM '^p(\d+)=')::integer) INTO v_now
      FROM pg_foreign_server s, unnest(s.srvoptions) AS o
     WHERE s.srvname = 'queen_shards' AND o ~ '^p\d+=';
    IF v_now IS NULL THEN
        EXECUTE format('CREATE SERVER queen_shards FOREIGN DATA WRAPPER plproxy OPTIONS (%s)',
                       (SELECT string_agg(format('p%s %L', i, p_shards[i % cardinality(p_shards) + 1]), ', '
                                          ORDER BY i)
                          FROM generate_series(0, p_logical_shards - 1) AS i));
    ELSIF v_now <> v_wanted
          AND (cardinality(v_now) <> p_logical_shards
               OR (SELECT array_agg(DISTINCT c ORDER BY c) FROM unnest(p_shards) AS c)
                  IS DISTINCT FROM (SELECT array_agg(DISTINCT d.conninfo ORDER BY d.conninfo) FROM queen.shard_databases() d))
    THEN
        -- After moves (queen.repoint_shard) the mapping is no longer i % n; it stands as long
        -- as init names the same databases.
        RAISE EXCEPTION 'the proxy already has another cluster: % (init takes the databases `queen shards status` lists)',
              array_to_string(v_now, ', ') USING ERRCODE = 'QN409';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_user_mappings WHERE srvname = 'queen_shards' AND usename = 'public') THEN
        CREATE USER MAPPING FOR PUBLIC SERVER queen_shards;
    END IF;
END;
$$;
COMMENT ON FUNCTION queen_proxy.configure_cluster IS
  'Creates the PL/Proxy cluster queen_shards, logical shard i on shards[i % n + 1]; another list or count than the existing one is refused.';

-- queen.shard_databases(): each logical shard and the connection string of its database.
-- The broker reads it at boot to LISTEN and run housekeeping on every shard database.
CREATE OR REPLACE FUNCTION queen.shard_databases()
RETURNS TABLE(logical_shard integer, conninfo text)
LANGUAGE sql STABLE
AS $$
    SELECT substring(o FROM '^p(\d+)=')::integer, substring(o FROM '^p\d+=(.*)$')
      FROM pg_foreign_server s, unnest(s.srvoptions) AS o
     WHERE s.srvname = 'queen_shards' AND o ~ '^p\d+='
     ORDER BY 1
$$;
COMMENT ON FUNCTION queen.shard_databases() IS
  'Logical shards of this proxy and the connection string of the database holding each.';

-- queen_proxy.database_shards(): one logical shard per shard database (the lowest), in a
-- random order: a call that must look at every database in turn starts at a random one.
CREATE OR REPLACE FUNCTION queen_proxy.database_shards()
RETURNS integer[]
LANGUAGE sql VOLATILE
AS $$
    SELECT array_agg(d.shard ORDER BY random())
      FROM (SELECT min(logical_shard) AS shard FROM queen.shard_databases() GROUP BY conninfo) d
$$;
COMMENT ON FUNCTION queen_proxy.database_shards IS
  'One logical shard per shard database (the lowest), in a random order: a call that must look at every database in turn starts at a random one.';

-- queen_proxy.logical_shards(): how many logical shards the cluster has.
CREATE OR REPLACE FUNCTION queen_proxy.logical_shards()
RETURNS integer
LANGUAGE sql STABLE
AS $$ SELECT count(*)::integer FROM queen.shard_databases() $$;
COMMENT ON FUNCTION queen_proxy.logical_shards IS
  'How many logical shards the cluster has.';

-- queen_proxy.shard_signatures(names): queen.api_signatures on the first shard.
CREATE OR REPLACE FUNCTION queen_proxy.shard_signatures(p_names text[])
RETURNS TABLE(name text, arguments text, argument_names text[], result text, returns_set boolean,
              returns_table boolean)
LANGUAGE plproxy
AS $$
    CLUSTER 'queen_shards';
    RUN ON 0;
    TARGET queen.api_signatures;
$$;
COMMENT ON FUNCTION queen_proxy.shard_signatures IS
  'queen.api_signatures on the first shard: how the shards declare the named functions.';

-- queen.repoint_shard(shard, conninfo): the logical shard's calls go to that database
-- from each proxy session's next call on (PL/Proxy reads a changed server at the next call).
-- The last step but one of `queen shards move` (sql/procedures/88_shard_moves.sql).
CREATE OR REPLACE FUNCTION queen.repoint_shard(p_shard integer, p_conninfo text)
RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
    v_before text;
BEGIN
    SELECT d.conninfo INTO v_before FROM queen.shard_databases() d WHERE d.logical_shard = p_shard;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the cluster has no logical shard %', p_shard USING ERRCODE = 'QN404';
    END IF;
    EXECUTE format('ALTER SERVER queen_shards OPTIONS (SET %I %L)', 'p' || p_shard, p_conninfo);
    RETURN v_before;
END;
$$;
COMMENT ON FUNCTION queen.repoint_shard IS
  'Proxy: sends the logical shard''s calls to that database from each proxy session''s next call on (PL/Proxy reads a changed server at the next call).';

-- queen.wait_for_earlier_calls(timeout): waits until every transaction of this proxy database
-- that began before this call has ended, at most p_timeout; how many are still running (0: none).
-- After queen.repoint_shard a move waits here, so that no call that read the old mapping can
-- still reach the source once it releases the shard. Other roles' sessions are seen with
-- pg_read_all_stats (or as a superuser).
CREATE OR REPLACE FUNCTION queen.wait_for_earlier_calls(p_timeout interval)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_from  timestamptz := clock_timestamp();
    v_until timestamptz := clock_timestamp() + p_timeout;
    v_left  integer;
BEGIN
    LOOP
        PERFORM pg_stat_clear_snapshot();  -- a transaction otherwise sees one reading of the activity
        SELECT count(*) INTO v_left FROM pg_stat_activity a
         WHERE a.datname = current_database() AND a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()
           AND a.xact_start < v_from;
        EXIT WHEN v_left = 0 OR clock_timestamp() > v_until;
        PERFORM pg_sleep(0.01);
    END LOOP;
    RETURN v_left;
END;
$$;
COMMENT ON FUNCTION queen.wait_for_earlier_calls IS
  'Proxy: waits until every transaction of this proxy database that began before this call has ended, at most p_timeout.';

-- queen.record_shard_move(shard, source, target): the move under way of the logical shard
-- (one at a time per shard; a new record replaces an interrupted one's).
CREATE OR REPLACE FUNCTION queen.record_shard_move(p_shard integer, p_source text, p_target text)
RETURNS void
LANGUAGE sql
AS $$
    INSERT INTO queen_proxy.shard_moves (logical_shard, source, target) VALUES (p_shard, p_source, p_target)
    ON CONFLICT (logical_shard) DO UPDATE SET source = EXCLUDED.source, target = EXCLUDED.target,
                                              started_at = now()
$$;
COMMENT ON FUNCTION queen.record_shard_move IS
  'Proxy: records the move under way of the logical shard (one at a time; a new record replaces an interrupted one''s).';

-- queen.shard_move_under_way(shard): the source and target of the logical shard's move that
-- has not ended (no row: none).
CREATE OR REPLACE FUNCTION queen.shard_move_under_way(p_shard integer)
RETURNS TABLE(source text, target text)
LANGUAGE sql STABLE
AS $$ SELECT m.source, m.target FROM queen_proxy.shard_moves m WHERE m.logical_shard = p_shard $$;
COMMENT ON FUNCTION queen.shard_move_under_way IS
  'Proxy: the source and target of the logical shard''s move that has not ended (no row: none).';

-- queen.forget_shard_move(shard): the logical shard's move has ended.
CREATE OR REPLACE FUNCTION queen.forget_shard_move(p_shard integer)
RETURNS void
LANGUAGE sql
AS $$ DELETE FROM queen_proxy.shard_moves WHERE logical_shard = p_shard $$;
COMMENT ON FUNCTION queen.forget_shard_move IS
  'Proxy: forgets the logical shard''s move, which has ended.';
