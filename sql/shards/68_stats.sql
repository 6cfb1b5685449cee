-- The proxy's hand-written stats refresh and age (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/68_stats.sql):
-- each shard refreshes the stats of its own partitions.

-- queen.stats_age: the age of the oldest shard's newest stats snapshot (each shard's
-- housekeeping takes its own), so a listing says how stale its oldest part may be.
CREATE OR REPLACE FUNCTION queen.stats_age()
RETURNS integer
LANGUAGE plpgsql
AS $$
BEGIN
    RETURN (SELECT max(a) FROM queen_proxy.stats_age_every() AS a);
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.stats_age() IS
  'Proxy: seconds since the oldest of the shards'' newest stats snapshots.';

-- queen.refresh_stats on the proxy: a new stats snapshot on every shard database. The shards'
-- procedure commits page by page, which a PL/Proxy function cannot call, so each database is
-- called through dblink, one after another; the answer adds their partitions up and counts
-- the queues by name. skipped: every database was refreshing already (another session holds
-- its stats lock); a database that skipped keeps the snapshot its running pass is writing.
-- dblink connects with the cluster's connection strings: as for PL/Proxy, they must carry
-- what the proxy needs to log in (docs/scaling.md).
CREATE OR REPLACE PROCEDURE queen.refresh_stats(
    p_page_size integer DEFAULT 10000,
    INOUT skipped boolean DEFAULT false, INOUT snapshot_id bigint DEFAULT NULL,
    INOUT partitions bigint DEFAULT 0, INOUT queues bigint DEFAULT 0,
    INOUT taken_at timestamptz DEFAULT NULL, INOUT duration_ms integer DEFAULT 0,
    p_count_bytes boolean DEFAULT false)
LANGUAGE plpgsql
AS $$
DECLARE
    v_start timestamptz := clock_timestamp();
    v_names text[] := '{}';
    d       record;
    r       record;
BEGIN
    skipped := true;
    snapshot_id := NULL;
    partitions := 0;
    FOR d IN SELECT DISTINCT s.conninfo FROM queen.shard_databases() s LOOP
        SELECT * INTO r
          FROM queen_proxy.dblink(d.conninfo,
                                  format('CALL queen.refresh_stats(p_page_size => %s, p_count_bytes => %L)',
                                         p_page_size, coalesce(p_count_bytes, false)))
               AS t(skipped boolean, snapshot_id bigint, partitions bigint, queues bigint, taken_at timestamptz,
                    duration_ms integer);
        IF NOT r.skipped THEN
            skipped := false;
            snapshot_id := greatest(snapshot_id, r.snapshot_id);
            partitions := partitions + r.partitions;
        END IF;
        v_names := v_names || ARRAY(SELECT n FROM queen_proxy.dblink(d.conninfo, 'SELECT name FROM queen.queues')
                                                  AS q(n text));
    END LOOP;
    queues := (SELECT count(DISTINCT n) FROM unnest(v_names) AS n);
    taken_at := clock_timestamp();
    duration_ms := (extract(epoch FROM taken_at - v_start) * 1000)::integer;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON PROCEDURE queen.refresh_stats(integer, boolean, bigint, bigint, bigint, timestamptz, integer, boolean) IS
  'Proxy: a new stats snapshot on every shard database (through dblink), their partitions added up.';
