-- queen.push_spooled: stores records drained from a broker's spool (docs/maintenance-and-spool.md)
-- when some of them are "in doubt": a direct attempt to store them may have committed before
-- the broker lost its connection, or a drain of them was interrupted before the broker could
-- note that it committed. Such an item must not be stored twice, whatever the queue's
-- dedupWindowSeconds (0 included), so it is probed before it is pushed.
-- Inputs: exactly those of queen.push (keys p_queues/p_partitions/p_counts, then the items
--   grouped by key in key order), plus p_probe_since[i] per item: NULL for an item that was
--   never sent to the database (pushed like any other), or a time no later than any moment
--   the item could have been stored (the broker sends its acceptance time minus a margin
--   for clock skew).
-- Probe (in-doubt items only): the item is a duplicate when its transactionId is stored in
--   the partition in a segment created at or after p_probe_since[i] (segments are walked
--   backwards from the newest, through queen.decode_segment, so the cost is the partition's
--   segments since that time), or in queen.log_dedup with created_at at or after that time.
--   The partition row is locked FOR UPDATE before the probe, so a commit of the same item
--   by another session is either visible or waited for. Frames that this database cannot
--   decode (zstd without queen_ext) cannot be probed: a WARNING is raised and only
--   queen.log_dedup counts for them.
-- Everything else goes through queen.push, one call per key, keys in the same byte order
--   as queen.push locks them (no new deadlock between pushers), with the queue's normal
--   dedup window and back-pressure (QN429 aborts the whole call, nothing stored).
-- Output: one row per item, like queen.push: 'queued' with partition, offset and createdAt,
--   or 'duplicate' with the partition and the stored original's offset (created_at NULL).

CREATE OR REPLACE FUNCTION queen.push_spooled(
    p_queues text[], p_partitions text[], p_counts integer[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[],
    p_probe_since timestamptz[])
RETURNS TABLE(item integer, status text, partition_id bigint, msg_offset bigint, created_at timestamptz)
LANGUAGE plpgsql
-- A spooled push was accepted: its queue is created past its tenant's QUEEN_TENANT_MAX_QUEUES.
SET queen.tenant_max_queues = '0'
AS $$
#variable_conflict use_column
DECLARE
    k          record;
    v_queue_id bigint;
    v_pid      bigint;
    v_since    timestamptz;
    v_after    bigint;
    v_dups     integer[];
    v_dup_offs bigint[];
    v_keep     integer[];
    v_opaque   bigint;
BEGIN
    IF cardinality(p_txids) <> cardinality(p_trace_ids)
       OR cardinality(p_txids) <> cardinality(p_producers)
       OR cardinality(p_txids) <> cardinality(p_payloads)
       OR cardinality(p_txids) <> cardinality(p_probe_since) THEN
        RAISE EXCEPTION 'push_spooled: item arrays differ in length' USING ERRCODE = '22023';
    END IF;

    FOR k IN SELECT * FROM queen.push_key_ranges(p_queues, p_partitions, p_counts, cardinality(p_txids))
    LOOP
        CONTINUE WHEN k.hi < k.lo;
        v_dups := '{}';
        v_dup_offs := '{}';
        SELECT min(p_probe_since[g.i]) INTO v_since FROM generate_series(k.lo, k.hi) AS g(i);

        IF v_since IS NOT NULL THEN
            v_queue_id := queen.ensure_queue(k.queue);
            v_pid := queen.ensure_partition(v_queue_id, k.part);
            PERFORM 1 FROM queen.log_partitions p WHERE p.id = v_pid FOR UPDATE;
            -- Segments with last_offset > v_after are exactly those created at or after v_since.
            v_after := queen.offset_at_time(v_pid, v_since, false);

            -- Each array element is read once (element access of a text[] costs its position).
            WITH items AS MATERIALIZED (
                SELECT g.i, p_txids[g.i] AS txid, p_probe_since[g.i] AS since
                  FROM generate_series(k.lo, k.hi) AS g(i)
                 WHERE p_probe_since[g.i] IS NOT NULL
            ), frames AS MATERIALIZED (
                SELECT f.transaction_id AS txid, s.first_offset + f.idx AS off, s.created_at AS at
                  FROM queen.log_segments s
                  CROSS JOIN LATERAL queen.decode_segment(s.body) AS f
                 WHERE s.partition_id = v_pid AND s.last_offset > v_after
            ), stored AS (
                SELECT fr.txid, fr.off, fr.at FROM frames fr WHERE fr.txid IN (SELECT it.txid FROM items it)
                UNION ALL
                SELECT d.transaction_id, d.msg_offset, d.created_at
                  FROM queen.log_dedup d
                 WHERE d.partition_id = v_pid AND d.created_at >= v_since
                   AND d.transaction_id IN (SELECT it.txid FROM items it)
            ), hits AS (
                SELECT it.i, min(st.off) AS off
                  FROM items it JOIN stored st ON st.txid = it.txid AND st.at >= it.since
                 GROUP BY it.i
            )
            SELECT (SELECT coalesce(array_agg(h.i ORDER BY h.i), '{}') FROM hits h),
                   (SELECT coalesce(array_agg(h.off ORDER BY h.i), '{}') FROM hits h),
                   (SELECT count(*) FROM frames fr WHERE fr.txid IS NULL)
              INTO v_dups, v_dup_offs, v_opaque;
            IF v_opaque > 0 THEN
                RAISE WARNING 'push_spooled: % frame(s) of partition % cannot be decoded here; in-doubt items were probed against log_dedup only',
                    v_opaque, v_pid;
            END IF;
        END IF;

        SELECT coalesce(array_agg(g.i ORDER BY g.i), '{}') INTO v_keep
          FROM generate_series(k.lo, k.hi) AS g(i)
         WHERE NOT (g.i = ANY (v_dups));

        IF cardinality(v_keep) > 0 THEN
            RETURN QUERY
                SELECT v_keep[r.item], r.status, r.partition_id, r.msg_offset, r.created_at
                  FROM queen.push(
                        ARRAY[k.queue], ARRAY[k.part], ARRAY[cardinality(v_keep)],
                        ARRAY(SELECT p_txids[x.i] FROM unnest(v_keep) WITH ORDINALITY AS x(i, o) ORDER BY x.o),
                        ARRAY(SELECT p_trace_ids[x.i] FROM unnest(v_keep) WITH ORDINALITY AS x(i, o) ORDER BY x.o),
                        ARRAY(SELECT p_producers[x.i] FROM unnest(v_keep) WITH ORDINALITY AS x(i, o) ORDER BY x.o),
                        ARRAY(SELECT p_payloads[x.i] FROM unnest(v_keep) WITH ORDINALITY AS x(i, o) ORDER BY x.o)) AS r;
        END IF;
        IF cardinality(v_dups) > 0 THEN
            RETURN QUERY
                SELECT x.i, 'duplicate'::text, v_pid, x.off, NULL::timestamptz
                  FROM unnest(v_dups, v_dup_offs) AS x(i, off);
        END IF;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION queen.push_spooled(text[], text[], integer[], text[], uuid[], text[], text[], timestamptz[]) IS
  'Stores drained spool records like queen.push, probing in-doubt items first so that none is stored twice.';

-- queen.push_spooled_part: queen.push_spooled over this shard's share of a split drain.
CREATE OR REPLACE FUNCTION queen.push_spooled_part(
    p_shards integer[], p_items integer[], p_queues text[], p_partitions text[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[], p_probe_since timestamptz[])
RETURNS TABLE(item integer, status text, partition_id bigint, msg_offset bigint, created_at timestamptz)
LANGUAGE plpgsql
AS $$
DECLARE
    k record;
BEGIN
    SELECT * INTO k FROM queen.push_part_keys(p_queues, p_partitions);
    RETURN QUERY
        SELECT p_items[r.item], r.status, r.partition_id, r.msg_offset, r.created_at
          FROM queen.push_spooled(k.queues, k.partitions, k.counts, p_txids, p_trace_ids, p_producers, p_payloads,
                                  p_probe_since) AS r;
END;
$$;
COMMENT ON FUNCTION queen.push_spooled_part(integer[], integer[], text[], text[], text[], uuid[], text[], text[],
                                            timestamptz[]) IS
  'queen.push_spooled over one shard''s share of a split drain; items numbered as in the whole call.';
