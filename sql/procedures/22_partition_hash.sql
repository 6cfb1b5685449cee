-- queen.partition_hash(queue, partition): the shard key of a partition under shards
-- (docs/scaling.md, "Placement"). The partition name alone, so one entity's lanes in every
-- queue share a shard; every queue's Default partition is hashed with its queue's key so they
-- spread. `queen shards init` installs this same file on the proxy: both sides hash alike.
-- Applied to a shard proxy too.
CREATE OR REPLACE FUNCTION queen.partition_hash(p_queue text, p_partition text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT hashtext(CASE WHEN p_partition = 'Default' THEN p_queue || chr(31) || p_partition ELSE p_partition END)
$$;
COMMENT ON FUNCTION queen.partition_hash(text, text) IS
  'Shard key hash of a (queue key, partition name); its low bits name the logical shard.';
