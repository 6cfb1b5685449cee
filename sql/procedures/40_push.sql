-- queen.push: stores the items of one (possibly fused) push in ONE transaction.
-- Inputs: per (queue, partition) key: p_queues[k], p_partitions[k], p_counts[k]; then the
--   items, grouped by key in key order (the first p_counts[1] items belong to key 1, …):
--   p_txids (non-NULL), p_trace_ids, p_producers, p_payloads (JSON text).
-- Output: one row per item (item = its 1-based position in the item arrays):
--   status 'queued' with its partition, offset and createdAt, or 'duplicate' with the
--   partition and offset of the stored original (created_at NULL).
-- Dedup: a transactionId stored in the partition within the queue's dedupWindowSeconds
--   (by createdAt), or earlier in this call, is a duplicate; window 0 turns dedup off.
-- Lock order: keys are processed sorted by (queue, partition) in byte order; each
--   partition row is locked FOR UPDATE before offsets are allocated, so offsets are dense
--   and monotone, and concurrent pushers cannot deadlock.
-- Notifications are NOT sent here: the broker notifies after commit (DESIGN.md).

-- queen.push_key_ranges: the keys of a push call in lock order — (queue, partition) sorted by
-- bytes — each with the 1-based range lo..hi of its items in the item arrays (items come
-- grouped by key, in key order). Refuses key arrays of different lengths, and counts that do
-- not add up to p_item_count. One definition for every procedure that pushes by key.
CREATE OR REPLACE FUNCTION queen.push_key_ranges(
    p_queues text[], p_partitions text[], p_counts integer[], p_item_count integer)
RETURNS TABLE(queue text, part text, lo integer, hi integer)
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF cardinality(p_queues) <> cardinality(p_partitions) OR cardinality(p_queues) <> cardinality(p_counts) THEN
        RAISE EXCEPTION 'push: key arrays differ in length' USING ERRCODE = '22023';
    END IF;
    IF (SELECT coalesce(sum(c), 0) FROM unnest(p_counts) c) <> p_item_count THEN
        RAISE EXCEPTION 'push: item arrays do not match the key counts' USING ERRCODE = '22023';
    END IF;
    RETURN QUERY
        SELECT u.queue, u.part,
               (sum(u.cnt) OVER (ORDER BY u.ord) - u.cnt + 1)::integer,
               (sum(u.cnt) OVER (ORDER BY u.ord))::integer
          FROM unnest(p_queues, p_partitions, p_counts) WITH ORDINALITY AS u(queue, part, cnt, ord)
         ORDER BY u.queue COLLATE "C", u.part COLLATE "C";
END;
$$;
COMMENT ON FUNCTION queen.push_key_ranges(text[], text[], integer[], integer) IS
  'The keys of a push in lock order with the item range of each; validates the key arrays.';

CREATE OR REPLACE FUNCTION queen.push(
    p_queues text[], p_partitions text[], p_counts integer[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[])
RETURNS TABLE(item integer, status text, partition_id bigint, msg_offset bigint, created_at timestamptz)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    k          record;
    v_queue_id bigint;
    v_window   integer;
    v_pid      bigint;
    v_last     bigint;
    v_last_at  timestamptz;
    v_at       timestamptz;
    v_items    integer[];
    v_offsets  bigint[];
    v_new      boolean[];
    v_count    integer;
BEGIN
    IF cardinality(p_txids) <> cardinality(p_trace_ids)
       OR cardinality(p_txids) <> cardinality(p_producers)
       OR cardinality(p_txids) <> cardinality(p_payloads) THEN
        RAISE EXCEPTION 'push: item arrays differ in length' USING ERRCODE = '22023';
    END IF;

    -- Back-pressure: a queue with maxSize > 0 takes no push that would bring the messages
    -- its slowest group has not consumed above maxSize (all stored messages when no group
    -- consumes it yet). The whole call is refused; nothing of it is stored.
    FOR k IN
        SELECT q.name, q.max_size, sum(u.cnt) AS incoming
          FROM unnest(p_queues, p_counts) AS u(queue, cnt)
          JOIN queen.queues q ON q.name = u.queue
         WHERE q.max_size > 0
         GROUP BY q.name, q.max_size
    LOOP
        IF queen.queue_backlog(k.name) + k.incoming > k.max_size THEN
            RAISE EXCEPTION 'queue % is full: % messages not yet consumed, maxSize %',
                k.name, queen.queue_backlog(k.name), k.max_size
                USING ERRCODE = 'QN429';
        END IF;
    END LOOP;

    FOR k IN SELECT * FROM queen.push_key_ranges(p_queues, p_partitions, p_counts, cardinality(p_txids))
    LOOP
        CONTINUE WHEN k.hi < k.lo;
        v_queue_id := queen.ensure_queue(k.queue);
        SELECT q.dedup_window_seconds INTO v_window FROM queen.queues q WHERE q.id = v_queue_id;
        v_pid := queen.ensure_partition(v_queue_id, k.part);
        SELECT p.last_offset, p.last_created_at INTO v_last, v_last_at
          FROM queen.log_partitions p WHERE p.id = v_pid FOR UPDATE;
        -- createdAt is assigned here and never goes backwards within a partition.
        v_at := greatest(now(), v_last_at);

        WITH probed AS (
            SELECT g.i, p_txids[g.i] AS txid, d.msg_offset AS old_offset
              FROM generate_series(k.lo, k.hi) AS g(i)
              LEFT JOIN (SELECT pr.idx, pr.msg_offset
                           FROM queen.dedup_probe(v_pid, p_txids[k.lo:k.hi]) pr
                          WHERE v_window > 0
                            AND pr.created_at > v_at - make_interval(secs => v_window)) d
                ON d.idx = g.i - k.lo + 1
        ), ranked AS (
            SELECT pr.*, row_number() OVER (PARTITION BY pr.txid ORDER BY pr.i) AS rn
              FROM probed pr
        ), numbered AS (
            SELECT r.*,
                   (r.old_offset IS NULL AND (v_window = 0 OR r.rn = 1)) AS is_new,
                   count(*) FILTER (WHERE r.old_offset IS NULL AND (v_window = 0 OR r.rn = 1))
                       OVER (ORDER BY r.i) AS new_rank
              FROM ranked r
        ), resolved AS (
            SELECT n.i, n.is_new,
                   CASE WHEN v_window = 0 THEN v_last + n.new_rank
                        WHEN n.old_offset IS NOT NULL THEN n.old_offset
                        ELSE v_last + first_value(n.new_rank) OVER (PARTITION BY n.txid ORDER BY n.i)
                   END AS off
              FROM numbered n
        )
        SELECT array_agg(r.i ORDER BY r.i), array_agg(r.off ORDER BY r.i), array_agg(r.is_new ORDER BY r.i)
          INTO v_items, v_offsets, v_new
          FROM resolved r;

        SELECT count(*) INTO v_count FROM unnest(v_new) AS x(n) WHERE x.n;

        IF v_count > 0 THEN
            INSERT INTO queen.log_segments (partition_id, first_offset, last_offset, codec, created_at, body)
            SELECT v_pid, v_last + 1, v_last + v_count, get_byte(seg.body, 5), v_at, seg.body
              FROM (SELECT queen.pack_segment(
                        v_at,
                        array_agg(p_txids[x.i] ORDER BY x.i),
                        array_agg(p_trace_ids[x.i] ORDER BY x.i),
                        array_agg(p_producers[x.i] ORDER BY x.i),
                        array_agg(p_payloads[x.i] ORDER BY x.i)) AS body
                      FROM unnest(v_items, v_new) AS x(i, n)
                     WHERE x.n) AS seg;

            IF v_window > 0 THEN
                INSERT INTO queen.log_dedup AS d (partition_id, transaction_id, msg_offset, created_at)
                SELECT v_pid, p_txids[x.i], x.off, v_at
                  FROM unnest(v_items, v_offsets, v_new) AS x(i, off, n)
                 WHERE x.n
                ON CONFLICT (partition_id, transaction_id)
                DO UPDATE SET msg_offset = EXCLUDED.msg_offset, created_at = EXCLUDED.created_at;
            END IF;

            UPDATE queen.log_partitions p
               SET last_offset = v_last + v_count, last_created_at = v_at, last_push_at = now()
             WHERE p.id = v_pid;
        END IF;

        RETURN QUERY
            SELECT x.i, CASE WHEN x.n THEN 'queued' ELSE 'duplicate' END, v_pid, x.off,
                   CASE WHEN x.n THEN v_at END
              FROM unnest(v_items, v_offsets, v_new) AS x(i, off, n);
    END LOOP;
END;
$$;
-- queen.queue_backlog(queue): messages of the queue that its slowest consumer group has
-- not consumed; every stored message when no group consumes the queue yet.
CREATE OR REPLACE FUNCTION queen.queue_backlog(p_queue text)
RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM queen.consumer_groups g WHERE g.queue_name = p_queue)
                THEN (SELECT coalesce(sum(p.last_offset), 0) FROM queen.log_partitions p
                        JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = p_queue)
                ELSE (SELECT coalesce(max(lag), 0) FROM (
                        SELECT c.consumer_group, sum(p.last_offset - c.committed) AS lag
                          FROM queen.log_consumers c
                          JOIN queen.log_partitions p ON p.id = c.partition_id
                          JOIN queen.queues q ON q.id = p.queue_id
                         WHERE q.name = p_queue
                         GROUP BY c.consumer_group) per_group)
           END::bigint
$$;
COMMENT ON FUNCTION queen.queue_backlog(text) IS
  'Messages of a queue not yet consumed by its slowest group (all messages without a group).';

COMMENT ON FUNCTION queen.push(text[], text[], integer[], text[], uuid[], text[], text[]) IS
  'Stores pushed items, one segment per partition, with exact dedup; one row per item.';
