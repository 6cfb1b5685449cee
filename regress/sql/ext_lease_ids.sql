-- Lease ids (sql/procedures/54_lease_ids.sql) on both pop paths: version 4 on a database that is
-- not a shard; with the setting queen.lease_shards (what queen.become_shard sets on a shard)
-- version 8 with the hosted shards' mask in the last 32 bits for a one-partition pop, every
-- shard's for a pop that may claim several partitions; a malformed setting is ignored.
SET client_min_messages = warning;
\set VERBOSITY terse
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'queen_ext') AS had_extension \gset
DROP EXTENSION IF EXISTS queen_ext;

SELECT queen.lease_shard_mask(ARRAY[0, 2, 34]) AS mask_0_2_34, queen.lease_shard_mask(ARRAY[31, 5]) AS mask_31_5,
       queen.lease_shard_mask('{}') AS mask_none;

CREATE FUNCTION pg_temp.shape(id uuid) RETURNS text LANGUAGE sql AS $$
    SELECT CASE WHEN id IS NULL THEN 'none' ELSE 'v' || substr(id::text, 15, 1) || ' ' || right(id::text, 8) END
$$;
-- A v4 id's last 32 bits are random: show only its version.
CREATE FUNCTION pg_temp.version(id uuid) RETURNS text LANGUAGE sql AS $$ SELECT 'v' || substr(id::text, 15, 1) $$;

SELECT pg_temp.version(queen.new_lease_id(1)) AS not_a_shard;
SELECT set_config('queen.lease_shards', '0000000a', false) IS NOT NULL AS set;
SELECT pg_temp.shape(queen.new_lease_id(1)) AS one_partition, pg_temp.shape(queen.new_lease_id(3)) AS several;
SELECT count(DISTINCT queen.new_lease_id(1)) AS distinct_ids FROM generate_series(1, 1000);
SELECT set_config('queen.lease_shards', 'not-hex!', false) IS NOT NULL AS set;
SELECT pg_temp.version(queen.new_lease_id(1)) AS malformed_setting;

-- The pops: a named partition, queue-wide with one and with several partitions, fused.
SELECT set_config('queen.lease_shards', '0000000a', false) IS NOT NULL AS set;
CREATE FUNCTION pg_temp.pops(p text) RETURNS TABLE(call text, lease text) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM queen.configure(p || '_q', NULL, NULL, NULL);
    PERFORM queen.push(ARRAY[p || '_q', p || '_q', p || '_q', p || '_q'], ARRAY['a', 'b', 'c', 'd'],
                       ARRAY[1, 1, 1, 1], ARRAY['1', '2', '3', '4'], ARRAY[NULL, NULL, NULL, NULL]::uuid[],
                       ARRAY[NULL, NULL, NULL, NULL]::text[], ARRAY['1', '2', '3', '4']);
    RETURN QUERY SELECT 'pop named', pg_temp.shape(x.lease_id)
                   FROM queen.pop(p || '_q', 'a', 'g', 1, 4, false, true, NULL) x;
    RETURN QUERY SELECT 'pop one', pg_temp.shape(x.lease_id)
                   FROM queen.pop(p || '_q', NULL, 'g', 1, 1, false, true, NULL) x LIMIT 1;
    RETURN QUERY SELECT 'pop several', pg_temp.shape(x.lease_id)
                   FROM queen.pop(p || '_q', NULL, 'g', 2, 2, false, true, NULL) x LIMIT 1;
    RETURN QUERY SELECT 'fused ' || f.request, pg_temp.shape(f.lease_id)
                   FROM queen.pop_fused(p || '_q', 'h', ARRAY[1, 3], ARRAY[1, 3], false, true, NULL) f
                  WHERE f.partition_id IS NOT NULL GROUP BY f.request, f.lease_id;
END $$;
SELECT * FROM pg_temp.pops('stock') ORDER BY call;
CREATE EXTENSION queen_ext;
SELECT * FROM pg_temp.pops('ext') ORDER BY call;
SELECT set_config('queen.lease_shards', '', false) IS NOT NULL AS set;
-- Later suites share this database.
SELECT queen.delete_queue('stock_q') AS deleted_stock, queen.delete_queue('ext_q') AS deleted_ext;

SELECT CASE WHEN NOT :'had_extension' THEN 'DROP EXTENSION queen_ext' END AS restore \gset
\if :{?restore}
:restore;
\endif
