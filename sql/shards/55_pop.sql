-- The proxy's hand-written pop and lease release (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/55_pop.sql):
-- a partition's pop on its shard; a lease released on the shard databases its id names
-- (sql/procedures/54_lease_ids.sql), with no lookup; every database for an id that names none.

-- queen.pop: a partition's pop on its shard; a queue-wide pop is queen.pop_fused with one
-- request (below). The group is registered on every shard first, with one start.
CREATE OR REPLACE FUNCTION queen.pop(
    p_queue text, p_partition text, p_group text, p_batch integer, p_max_partitions integer,
    p_auto_ack boolean, p_subscribe_all boolean, p_subscription_at timestamptz)
RETURNS TABLE(partition_id bigint, partition_name text, lease_id uuid, span_start bigint,
              span_end bigint, seg_first bigint, seg_codec smallint, seg_body bytea, skip_offsets bigint[],
              leases_expired integer, redelivered bigint, lease_dead_letters integer, expired_dead_letters bigint)
LANGUAGE plpgsql
AS $$
DECLARE
    v_at timestamptz;
BEGIN
    v_at := queen_proxy.register_everywhere(p_queue, p_group, p_subscribe_all, p_subscription_at);
    IF p_partition IS NOT NULL THEN
        RETURN QUERY SELECT * FROM queen_proxy.pop(queen.partition_hash(p_queue, p_partition), p_queue, p_partition,
                                                   p_group, p_batch, p_max_partitions, p_auto_ack, p_subscribe_all,
                                                   v_at);
        RETURN;
    END IF;
    RETURN QUERY
        SELECT f.partition_id, f.partition_name, f.lease_id, f.span_start, f.span_end, f.seg_first, f.seg_codec,
               f.seg_body, f.skip_offsets, f.leases_expired, f.redelivered, f.lease_dead_letters,
               f.expired_dead_letters
          FROM queen.pop_fused(p_queue, p_group, ARRAY[p_batch], ARRAY[p_max_partitions], p_auto_ack,
                               p_subscribe_all, v_at) f;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.pop(text, text, text, integer, integer, boolean, boolean, timestamptz) IS
  'Proxy: a partition''s pop on its shard; a queue-wide pop is queen.pop_fused with one request.';

-- queen.release_lease: queen.release_lease on the databases the lease id names, in one call;
-- the cursors released on all of them.
CREATE OR REPLACE FUNCTION queen.release_lease(p_lease_id uuid, p_group text)
RETURNS integer
LANGUAGE plpgsql
AS $$
BEGIN
    RETURN (SELECT coalesce(sum(r.released), 0)::integer
              FROM queen_proxy.release_lease_part(queen_proxy.lease_databases(p_lease_id), p_lease_id, p_group) AS r);
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.release_lease(uuid, text) IS
  'Proxy: a lease released on the shard databases its id names; the cursors released.';
