-- queen.ack_fused: the acknowledgements of several requests of one consumer group in one call
-- (the broker's ack fusion, docs/architecture.md "Fused acknowledgements").
-- Inputs: the group; p_requests, the request each ack belongs to (acks of one request share a
--   number); then queen.ack's six arrays, parallel to it.
-- A request is applied, exactly as queen.ack alone would apply it, when every cursor it names
--   was free to lock now and no earlier request of the call names the same partition (each
--   partition belongs to the request that names it first). Any other request is left
--   untouched and gets no row: the caller sends it on its own (then it waits for the lock like
--   any queen.ack). So a request never waits here for a lock another request's transaction
--   holds, and requests on the same partition are never merged into one walk.
-- Output: queen.ack's rows for the applied requests, item = the ack's 1-based position in the
--   call's arrays.
-- Lock order: cursor rows in partition id order, none waited for (SKIP LOCKED); queen.ack then
--   locks again the ones it uses, which this transaction already holds.

CREATE OR REPLACE FUNCTION queen.ack_fused(
    p_group text, p_requests integer[], p_partition_ids bigint[], p_txids text[], p_offsets bigint[],
    p_lease_ids uuid[], p_statuses text[], p_errors text[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
LANGUAGE plpgsql
-- Key lookups only, newest cursor version first (docs/architecture.md, "Plans that stay right";
-- 51_cursor_versions.sql).
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
-- Generic plans only: array parameters would otherwise be planned again on every call.
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_locked bigint[];
    v_take   integer[];  -- positions of the acks applied, in order
    s_pids   bigint[];
    s_txids  text[];
    s_offs   bigint[];
    s_leases uuid[];
    s_stats  text[];
    s_errs   text[];
BEGIN
    -- With queen_ext 1.3 the same contract runs in C (ext/ack_fused.c).
    IF to_regproc('queen_ext.ack_fused') IS NOT NULL THEN
        RETURN QUERY SELECT * FROM queen_ext.ack_fused(p_group, p_requests, p_partition_ids, p_txids, p_offsets,
                                                       p_lease_ids, p_statuses, p_errors);
        RETURN;
    END IF;
    IF cardinality(p_requests) <> cardinality(p_partition_ids) THEN
        RAISE EXCEPTION 'ack_fused: arrays differ in length' USING ERRCODE = '22023';
    END IF;
    SELECT coalesce(array_agg(k.pid), '{}') INTO v_locked
      FROM (SELECT DISTINCT u.pid FROM unnest(p_partition_ids) AS u(pid) ORDER BY u.pid) k
     CROSS JOIN LATERAL (
        SELECT lc.ctid FROM queen.log_consumers lc
         WHERE lc.partition_id = k.pid AND lc.consumer_group = p_group
         ORDER BY lc.version DESC LIMIT 1
           FOR UPDATE SKIP LOCKED) c;

    WITH a AS (
        SELECT u.r, u.pid, u.i::integer AS i
          FROM unnest(p_requests, p_partition_ids) WITH ORDINALITY AS u(r, pid, i)
    ), firsts AS (
        SELECT a.r, min(a.i) AS first FROM a GROUP BY a.r
    ), owners AS (
        SELECT DISTINCT ON (a.pid) a.pid, a.r FROM a JOIN firsts f ON f.r = a.r ORDER BY a.pid, f.first
    ), refused AS (
        SELECT DISTINCT a.r FROM a JOIN owners o ON o.pid = a.pid
         WHERE o.r <> a.r OR NOT (a.pid = ANY (v_locked))
    )
    SELECT coalesce(array_agg(a.i ORDER BY a.i), '{}') INTO v_take
      FROM a WHERE NOT EXISTS (SELECT 1 FROM refused x WHERE x.r = a.r);
    IF cardinality(v_take) = 0 THEN
        RETURN;
    END IF;

    SELECT array_agg(p_partition_ids[x.t] ORDER BY x.o), array_agg(p_txids[x.t] ORDER BY x.o),
           array_agg(p_offsets[x.t] ORDER BY x.o), array_agg(p_lease_ids[x.t] ORDER BY x.o),
           array_agg(p_statuses[x.t] ORDER BY x.o), array_agg(p_errors[x.t] ORDER BY x.o)
      INTO s_pids, s_txids, s_offs, s_leases, s_stats, s_errs
      FROM unnest(v_take) WITH ORDINALITY AS x(t, o);
    IF 'completed' = ALL (s_stats) THEN
        -- What queen.ack would call for completions only, without its layer.
        RETURN QUERY
            SELECT v_take[r.item], r.success, r.msg_offset, r.noop, r.dlq, r.lease_released, r.error, r.queue_name
              FROM queen.ack_completed(p_group, s_pids, s_txids, s_offs, s_leases) r;
        RETURN;
    END IF;
    RETURN QUERY
        SELECT v_take[r.item], r.success, r.msg_offset, r.noop, r.dlq, r.lease_released, r.error, r.queue_name
          FROM queen.ack(p_group, s_pids, s_txids, s_offs, s_leases, s_stats, s_errs) r;
END;
$$;
COMMENT ON FUNCTION queen.ack_fused(text, integer[], bigint[], text[], bigint[], uuid[], text[], text[]) IS
  'Applies the acks of several requests of a group together; a request whose cursors are busy or shared is left for its own call.';

-- queen.ack_fused_part: queen.ack_fused over this shard's share of a split fused ack.
CREATE OR REPLACE FUNCTION queen.ack_fused_part(
    p_shards integer[], p_items integer[], p_group text, p_requests integer[], p_partition_ids bigint[],
    p_txids text[], p_offsets bigint[], p_lease_ids uuid[], p_statuses text[], p_errors text[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
LANGUAGE sql
AS $$
    SELECT p_items[a.item], a.success, a.msg_offset, a.noop, a.dlq, a.lease_released, a.error, a.queue_name
      FROM queen.ack_fused(p_group, p_requests, p_partition_ids, p_txids, p_offsets, p_lease_ids, p_statuses,
                           p_errors) AS a
$$;
COMMENT ON FUNCTION queen.ack_fused_part(integer[], integer[], text, integer[], bigint[], text[], bigint[], uuid[],
                                         text[], text[]) IS
  'queen.ack_fused over one shard''s share of a split fused ack; items numbered as in the whole call.';
