-- Lease ids that name the shards their cursors are on (docs/scaling.md, "Lease ids"), so a
-- proxy extends or releases a lease on those shard databases only.
--
-- On a shard a lease id is a version-8 UUID whose last 32 bits are a mask of logical shards:
-- bit (s % 32) is set for each logical shard s the lease's cursors may be on. A pop that may
-- claim several partitions may be filled from several shard databases by the proxy, so its
-- lease names every logical shard; a one-partition pop's names the shards this database
-- hosts. The mask of the hosted shards is the setting queen.lease_shards (8 hex digits),
-- which queen.become_shard sets for the database. Without it (one database, or a session
-- older than the setting) a lease id is a random version-4 UUID, which the proxy takes to
-- name every shard. queen_ext.pop_fused makes the same ids (ext/pop_fused.c).

-- queen.lease_shard_mask(logical shards): the 8 hex digits of the mask naming them.
CREATE OR REPLACE FUNCTION queen.lease_shard_mask(p_shards integer[])
RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    SELECT lpad(to_hex(coalesce(bit_or(1::bigint << (s % 32)), 0)), 8, '0') FROM unnest(p_shards) AS s
$$;
COMMENT ON FUNCTION queen.lease_shard_mask(integer[]) IS
  'The 8 hex digits of a lease id''s shard mask naming those logical shards (bit s % 32 each).';

-- queen.new_lease_id(max partitions): a new lease id for a pop that may claim up to that many
-- partitions: random, naming its shards on a shard (above), version 4 elsewhere.
CREATE OR REPLACE FUNCTION queen.new_lease_id(p_max_partitions integer)
RETURNS uuid
LANGUAGE sql VOLATILE
AS $$
    SELECT CASE WHEN current_setting('queen.lease_shards', true) ~ '^[0-9a-f]{8}$'
                THEN overlay(overlay(replace(gen_random_uuid()::text, '-', '') PLACING '8' FROM 13 FOR 1)
                             PLACING CASE WHEN p_max_partitions > 1 THEN 'ffffffff'
                                          ELSE current_setting('queen.lease_shards', true) END
                             FROM 25 FOR 8)::uuid
                ELSE gen_random_uuid() END
$$;
COMMENT ON FUNCTION queen.new_lease_id(integer) IS
  'A new random lease id; on a shard it names the logical shards its cursors may be on.';
