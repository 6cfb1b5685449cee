-- The proxy database of a sharded deployment (docs/scaling.md): PL/Proxy, the cluster of
-- shard databases, and what the generator (20_generator.sql) needs. Applied by
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

-- queen_proxy.configure_cluster(shards, logical_shards): the PL/Proxy cluster queen_shards,
-- logical shard i on shards[i % n + 1]. Creating it again with the same list changes nothing;
-- another list or count is refused (moving shards is `queen shards move`, not init).
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
    ELSIF v_now <> v_wanted THEN
        RAISE EXCEPTION 'the proxy already has another cluster: % (init takes the same shards again)',
              array_to_string(v_now, ', ') USING ERRCODE = 'QN409';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_user_mappings WHERE srvname = 'queen_shards' AND usename = 'public') THEN
        CREATE USER MAPPING FOR PUBLIC SERVER queen_shards;
    END IF;
END;
$$;

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

-- queen_proxy.logical_shards(): how many logical shards the cluster has.
CREATE OR REPLACE FUNCTION queen_proxy.logical_shards()
RETURNS integer
LANGUAGE sql STABLE
AS $$ SELECT count(*)::integer FROM queen.shard_databases() $$;

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
