-- queen.push: stores the items of one (possibly fused) push in ONE transaction.
-- Inputs: per (queue, partition) key: p_queues[k], p_partitions[k], p_counts[k]; then the
--   items, grouped by key in key order (the first p_counts[1] items belong to key 1, …):
--   p_txids (non-NULL), p_trace_ids, p_producers, p_payloads (JSON text).
-- Output: one row per item (item = its 1-based position in the item arrays):
--   status 'queued' with its partition, offset and createdAt (the clock after the locks, never
--   earlier than the partition's newest createdAt), or 'duplicate' with the
--   partition and offset of the stored original (created_at NULL).
-- Dedup: a transactionId stored in the partition within the queue's dedupWindowSeconds
--   (by createdAt), or earlier in this call, is a duplicate; window 0 turns dedup off.
-- Lock order: the queues' claim-floor locks, shared (53_claim_floor.sql); then the partition
--   rows of all keys are locked FOR UPDATE in one statement, sorted
--   by (queue, partition) in byte order, before offsets are allocated, so offsets are dense
--   and monotone, and concurrent pushers cannot deadlock.
-- Cost: a fixed number of statements per call, whatever the number of keys (one segment
--   insert and one dedup insert for all of them); only the missing queues and partitions are
--   created one by one. The partition rows are locked, never rewritten: offsets continue
--   from each partition's newest segment (32_partition_head.sql).
-- Paths: with queen_ext 1.3 installed the body runs in C (queen_ext.push, ext/push.c) under
--   this same contract; the PL/pgSQL below is the stock path.
-- Isolation: READ COMMITTED only. Offsets come from a snapshot taken after the locks; a
--   transaction-wide snapshot (REPEATABLE READ, SERIALIZABLE) could miss a push committed
--   meanwhile, so such a call is refused.
-- Notifications are NOT sent here: the broker notifies after commit (docs/architecture.md).

-- queen.push_check_capacity(queues, counts): back-pressure. A queue with maxSize > 0 takes no
-- push that would bring the messages its slowest group has not consumed above maxSize (all
-- stored messages when no group consumes it yet): raises QN429 naming the queue, and the whole
-- call is refused. p_counts[k] items go to p_queues[k].
CREATE OR REPLACE FUNCTION queen.push_check_capacity(p_queues text[], p_counts integer[])
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    k record;
BEGIN
    FOR k IN
        SELECT q.name, q.max_size, sum(u.cnt) AS incoming
          FROM unnest(p_queues, p_counts) AS u(queue, cnt)
          JOIN queen.queues q ON q.name = u.queue
         WHERE q.max_size > 0
         GROUP BY q.name, q.max_size
    LOOP
        IF queen.queue_backlog(k.name) + k.incoming > k.max_size THEN
            RAISE EXCEPTION 'queue % is full: % messages not yet consumed, maxSize %',
                queen.queue_local_name(k.name), queen.queue_backlog(k.name), k.max_size
                USING ERRCODE = 'QN429';
        END IF;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION queen.push_check_capacity(text[], integer[]) IS
  'Refuses (QN429) a push that would bring a queue with maxSize above it.';

CREATE OR REPLACE FUNCTION queen.push(
    p_queues text[], p_partitions text[], p_counts integer[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[])
RETURNS TABLE(item integer, status text, partition_id bigint, msg_offset bigint, created_at timestamptz)
LANGUAGE plpgsql
-- Key lookups only: a plan cached while a table was small must not scan it whole once it
-- has grown (docs/architecture.md, "Plans that stay right").
SET enable_seqscan = off
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
    k          record;
    v_n        integer := cardinality(p_txids);
    v_queues   text[];     -- the call's distinct keys, in lock order
    v_parts    text[];
    v_pids     bigint[];
    v_windows  integer[];
    a_items    integer[];  -- the answer, one element per item
    a_new      boolean[];
    a_pids     bigint[];
    a_offsets  bigint[];
    a_ats      timestamptz[];
    v_locked   integer;
    v_rqueues  text[];     -- the item ranges of the keys (queen.push_key_ranges), once
    v_rparts   text[];
    v_rlos     integer[];
    v_rhis     integer[];
    v_ext      boolean := queen.codec_extension() IS NOT NULL;  -- pack with queen_ext
    v_clock    timestamptz;
BEGIN
    PERFORM queen.push_check_arguments(p_queues, p_partitions, p_counts, p_txids, p_payloads);
    -- With queen_ext 1.3 the same contract runs in C (ext/push.c).
    IF to_regproc('queen_ext.push') IS NOT NULL THEN
        RETURN QUERY SELECT * FROM queen_ext.push(p_queues, p_partitions, p_counts, p_txids,
                                                  p_trace_ids, p_producers, p_payloads);
        RETURN;
    END IF;
    PERFORM queen.require_read_committed('push');
    IF cardinality(p_txids) <> cardinality(p_trace_ids)
       OR cardinality(p_txids) <> cardinality(p_producers)
       OR cardinality(p_txids) <> cardinality(p_payloads) THEN
        RAISE EXCEPTION 'push: item arrays differ in length' USING ERRCODE = '22023';
    END IF;

    -- Frames are packed inline below, unchecked: a bad element is reported by the packer.
    IF EXISTS (SELECT 1 FROM unnest(p_txids, p_producers, p_payloads) AS u(txid, producer, payload)
                WHERE u.txid IS NULL
                   OR octet_length(convert_to(u.txid, 'UTF8')) NOT BETWEEN 1 AND queen.segment_max_txid_bytes()
                   OR octet_length(convert_to(u.producer, 'UTF8')) > queen.segment_max_producer_bytes()
                   OR u.payload IS NULL) THEN
        PERFORM queen.segment_pack_raw(now(), p_txids, p_trace_ids, p_producers, p_payloads);
    END IF;

    PERFORM queen.push_check_capacity(p_queues, p_counts);

    -- The item ranges of the keys that have items; then the distinct keys, in lock order,
    -- and the ids of those that exist.
    SELECT array_agg(r.queue), array_agg(r.part), array_agg(r.lo), array_agg(r.hi)
      INTO v_rqueues, v_rparts, v_rlos, v_rhis
      FROM queen.push_key_ranges(p_queues, p_partitions, p_counts, v_n) r
     WHERE r.hi >= r.lo;
    IF v_rqueues IS NULL THEN
        RETURN;
    END IF;
    -- A partition is found by a lookup of its own, on both columns of its unique key: as
    -- a join, a plan cached while the queue had few partitions found partitions by queue
    -- alone and filtered by name, reading every partition of the queue once it had
    -- thousands (230 ms a call at 10,000 partitions).
    SELECT array_agg(kk.queue ORDER BY kk.queue COLLATE "C", kk.part COLLATE "C"),
           array_agg(kk.part ORDER BY kk.queue COLLATE "C", kk.part COLLATE "C"),
           array_agg((SELECT pt.id FROM queen.log_partitions pt
                       WHERE pt.queue_id = (SELECT q.id FROM queen.queues q WHERE q.name = kk.queue)
                         AND pt.name = kk.part)
                     ORDER BY kk.queue COLLATE "C", kk.part COLLATE "C")
      INTO v_queues, v_parts, v_pids
      FROM (SELECT DISTINCT r.queue, r.part FROM unnest(v_rqueues, v_rparts) AS r(queue, part)) kk;

    -- The queues' claim-floor locks, shared, before any row lock (53_claim_floor.sql).
    PERFORM queen.lock_claim_floors_shared(v_queues);

    -- Lock every key's partition row in lock order (one statement: rows are locked in the
    -- order of its ORDER BY), creating missing queues and partitions first. A partition
    -- reclaimed by housekeeping between the two steps is created again.
    FOR attempt IN 1..3 LOOP
        FOR i IN 1..cardinality(v_pids) LOOP
            IF v_pids[i] IS NULL THEN
                v_pids[i] := queen.ensure_partition(queen.ensure_queue(v_queues[i]), v_parts[i]);
            END IF;
        END LOOP;
        SELECT count(*), array_agg(l.win ORDER BY l.o)
          INTO v_locked, v_windows
          FROM (SELECT u.o, q.dedup_window_seconds AS win
                  FROM unnest(v_pids) WITH ORDINALITY AS u(id, o)
                  JOIN queen.log_partitions pt ON pt.id = u.id
                  JOIN queen.queues q ON q.id = pt.queue_id
                 ORDER BY u.o
                   FOR UPDATE OF pt) l;
        EXIT WHEN v_locked = cardinality(v_pids);
        SELECT array_agg(pt.id ORDER BY u.o) INTO v_pids
          FROM unnest(v_pids) WITH ORDINALITY AS u(id, o)
          LEFT JOIN queen.log_partitions pt ON pt.id = u.id;
        IF attempt = 3 THEN
            RAISE EXCEPTION 'push: partitions vanished while being locked' USING ERRCODE = '40001';
        END IF;
    END LOOP;

    -- createdAt is no earlier than this clock, read after the locks: newer than any claim
    -- floor raised before them (53_claim_floor.sql).
    v_clock := clock_timestamp();

    -- Everything else in one statement, whose snapshot is taken after the locks, so it sees
    -- every push that held them before: each key's head (32_partition_head.sql; createdAt never
    -- goes backwards), probe, rank, offsets, one segment per key, dedup rows, one answer per
    -- item, kept in arrays for the cursors' ready_at below.
    WITH heads AS MATERIALIZED (
        SELECT x.*, h.last_offset AS last, greatest(v_clock, h.last_created_at) AS at
          FROM unnest(v_queues, v_parts, v_pids, v_windows) WITH ORDINALITY AS x(queue, part, pid, win, ko)
         CROSS JOIN LATERAL queen.partition_head(x.pid) h
    ), keys AS MATERIALIZED (
        SELECT x.*, int8send((extract(epoch FROM x.at) * 1000000)::bigint) AS ts  -- a frame's created_at
          FROM heads x
    ), items AS MATERIALIZED (
        SELECT u.i::integer AS i, ky.ko, ky.pid, ky.last, ky.at, ky.ts, ky.win,
               u.txid, u.trace, u.producer, u.payload
          FROM unnest(v_rqueues, v_rparts, v_rlos, v_rhis) AS r(queue, part, lo, hi)
          JOIN keys ky ON ky.queue = r.queue AND ky.part = r.part
         CROSS JOIN LATERAL generate_series(r.lo, r.hi) AS g(i)
          JOIN unnest(p_txids, p_trace_ids, p_producers, p_payloads)
               WITH ORDINALITY AS u(txid, trace, producer, payload, i)
            ON u.i = g.i
    ), probed AS (
        SELECT it.*, d.msg_offset AS old_offset
          FROM items it
          LEFT JOIN queen.dedup_probe(
                        (SELECT array_agg(CASE WHEN x.win > 0 THEN x.pid END ORDER BY x.i) FROM items x),
                        (SELECT array_agg(x.txid ORDER BY x.i) FROM items x)) d
            ON d.idx = it.i
           AND d.created_at > it.at - make_interval(secs => it.win)
    ), ranked AS (
        SELECT pr.*, row_number() OVER (PARTITION BY pr.ko, pr.txid ORDER BY pr.i) AS rn
          FROM probed pr
    ), numbered AS (
        SELECT r.*,
               (r.old_offset IS NULL AND (r.win = 0 OR r.rn = 1)) AS is_new,
               count(*) FILTER (WHERE r.old_offset IS NULL AND (r.win = 0 OR r.rn = 1))
                   OVER (PARTITION BY r.ko ORDER BY r.i) AS new_rank
          FROM ranked r
    ), resolved AS MATERIALIZED (
        SELECT n.i, n.ko, n.pid, n.last, n.at, n.ts, n.win, n.txid, n.trace, n.producer, n.payload, n.is_new,
               CASE WHEN n.win = 0 THEN n.last + n.new_rank
                    WHEN n.old_offset IS NOT NULL THEN n.old_offset
                    ELSE n.last + first_value(n.new_rank) OVER (PARTITION BY n.ko, n.txid ORDER BY n.i)
               END AS off
          FROM numbered n
    ), segments AS (
        INSERT INTO queen.log_segments (partition_id, first_offset, last_offset, codec, created_at, body)
        SELECT sg.pid, sg.last + 1, sg.last + sg.cnt, get_byte(sg.body, 5), sg.at, sg.body
          FROM (SELECT r.pid, r.last, r.at, count(*) AS cnt,
                       -- Stock: the frames inline (no function call per segment); queen_ext:
                       -- its packer (zstd). FILTER keeps the other path's aggregates empty.
                       CASE WHEN v_ext
                            THEN queen.pack_segment(r.at,
                                     array_agg(r.txid ORDER BY r.i) FILTER (WHERE v_ext),
                                     array_agg(r.trace ORDER BY r.i) FILTER (WHERE v_ext),
                                     array_agg(r.producer ORDER BY r.i) FILTER (WHERE v_ext),
                                     array_agg(r.payload ORDER BY r.i) FILTER (WHERE v_ext))
                            ELSE queen.segment_raw(count(*)::int,
                                     string_agg(queen.segment_frame(r.ts, r.txid, r.trace, r.producer, r.payload),
                                                ''::bytea ORDER BY r.i) FILTER (WHERE NOT v_ext))
                       END AS body
                  FROM resolved r
                 WHERE r.is_new
                 GROUP BY r.ko, r.pid, r.last, r.at) sg
        RETURNING 1
    ), dedup AS (
        INSERT INTO queen.log_dedup AS d (partition_id, transaction_id, msg_offset, created_at)
        SELECT r.pid, r.txid, r.off, r.at FROM resolved r WHERE r.is_new AND r.win > 0
        ON CONFLICT (partition_id, transaction_id)
        DO UPDATE SET msg_offset = EXCLUDED.msg_offset, created_at = EXCLUDED.created_at
        RETURNING 1
    )
    SELECT array_agg(r.i ORDER BY r.i), array_agg(r.is_new ORDER BY r.i), array_agg(r.pid ORDER BY r.i),
           array_agg(r.off ORDER BY r.i), array_agg(r.at ORDER BY r.i)
      INTO a_items, a_new, a_pids, a_offsets, a_ats
      FROM resolved r;

    -- The cursors of partitions that got messages become claimable (52_cursor_ready.sql).
    PERFORM queen.mark_ready(array_agg(u.pid), array_agg(u.at))
       FROM (SELECT DISTINCT r.pid, r.at FROM unnest(a_new, a_pids, a_ats) AS r(is_new, pid, at) WHERE r.is_new) u;

    RETURN QUERY
        SELECT r.i, CASE WHEN r.is_new THEN 'queued' ELSE 'duplicate' END, r.pid, r.off,
               CASE WHEN r.is_new THEN r.at END
          FROM unnest(a_items, a_new, a_pids, a_offsets, a_ats) AS r(i, is_new, pid, off, at);
END;
$$;
-- queen.queue_backlog(queue): messages of the queue that its slowest consumer group has
-- not consumed; every stored message when no group consumes the queue yet.
CREATE OR REPLACE FUNCTION queen.queue_backlog(p_queue text)
RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM queen.consumer_groups g WHERE g.queue_name = p_queue)
                THEN (SELECT coalesce(sum(queen.partition_last_offset(p.id)), 0) FROM queen.log_partitions p
                        JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = p_queue)
                ELSE (SELECT coalesce(max(lag), 0) FROM (
                        SELECT c.consumer_group, sum(queen.partition_last_offset(p.id) - c.committed) AS lag
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

-- queen.push_part_keys(queues, partitions): the (queue, partition) keys of a split push's
-- items (one key per item, equal keys adjacent) as queen.push takes them: keys and counts.
CREATE OR REPLACE FUNCTION queen.push_part_keys(p_queues text[], p_partitions text[],
                                                OUT queues text[], OUT partitions text[], OUT counts integer[])
LANGUAGE sql IMMUTABLE
AS $$
    SELECT array_agg(k.queue ORDER BY k.run), array_agg(k.part ORDER BY k.run), array_agg(k.n ORDER BY k.run)
      FROM (SELECT r.run, min(r.queue) AS queue, min(r.part) AS part, count(*)::integer AS n
              FROM (SELECT s.queue, s.part, sum(s.starts) OVER (ORDER BY s.i) AS run
                      FROM (SELECT u.i, u.queue, u.part,
                                   CASE WHEN (u.queue, u.part) IS NOT DISTINCT FROM
                                             (lag(u.queue) OVER w, lag(u.part) OVER w) THEN 0 ELSE 1 END AS starts
                              FROM unnest(p_queues, p_partitions) WITH ORDINALITY AS u(queue, part, i)
                            WINDOW w AS (ORDER BY u.i)) s) r
             GROUP BY r.run) k
$$;
COMMENT ON FUNCTION queen.push_part_keys(text[], text[]) IS
  'Keys and counts (queen.push''s form) of items given one key each, equal keys adjacent.';

-- queen.push_part: queen.push over this shard's share of a split push, one queue and
-- partition per item (in the request's order, so equal keys stay adjacent); item answers the
-- position in the whole call (p_items). Items of queues without a dedup window are recognised
-- by their receipt (queen.shard_receipts) when a retry brings them again: answered
-- 'duplicate' with the stored partition and offset, and not stored twice. Lock order: an
-- advisory lock per such key in hash order, then queen.push's.
CREATE OR REPLACE FUNCTION queen.push_part(
    p_shards integer[], p_items integer[], p_queues text[], p_partitions text[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[])
RETURNS TABLE(item integer, status text, partition_id bigint, msg_offset bigint, created_at timestamptz)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    k          record;
    v_receipts boolean;     -- some item's queue keeps no dedup window
    v_dup_i    integer[];   -- items recognised by their receipt, with the stored place
    v_dup_pid  bigint[];
    v_dup_off  bigint[];
    v_keep     integer[];   -- items to store
    v_receipt  boolean[];   -- per kept item: its queue keeps no dedup window
    r_item     integer[];
    r_status   text[];
    r_pid      bigint[];
    r_off      bigint[];
    r_at       timestamptz[];
BEGIN
    SELECT coalesce(bool_or(q.dedup_window_seconds = 0), false) INTO v_receipts
      FROM unnest(p_queues) AS u(queue) JOIN queen.queues q ON q.name = u.queue;
    IF NOT v_receipts THEN
        SELECT * INTO k FROM queen.push_part_keys(p_queues, p_partitions);
        RETURN QUERY
            SELECT p_items[r.item], r.status, r.partition_id, r.msg_offset, r.created_at
              FROM queen.push(k.queues, k.partitions, k.counts, p_txids, p_trace_ids, p_producers, p_payloads) AS r;
        RETURN;
    END IF;
    -- One advisory lock per unwindowed key, in hash order, before any row lock.
    PERFORM pg_advisory_xact_lock(h.hash)
       FROM (SELECT DISTINCT queen.partition_hash(u.queue, u.part) AS hash
               FROM unnest(p_queues, p_partitions) AS u(queue, part)
               JOIN queen.queues q ON q.name = u.queue AND q.dedup_window_seconds = 0) h
      ORDER BY h.hash;
    SELECT array_agg(u.i ORDER BY u.i), array_agg(sr.partition_id ORDER BY u.i), array_agg(sr.msg_offset ORDER BY u.i)
      INTO v_dup_i, v_dup_pid, v_dup_off
      FROM unnest(p_queues, p_partitions, p_txids) WITH ORDINALITY AS u(queue, part, txid, i)
      JOIN queen.queues q ON q.name = u.queue AND q.dedup_window_seconds = 0
      JOIN queen.shard_receipts sr
        ON sr.queue_name = u.queue AND sr.partition_name = u.part AND sr.transaction_id = u.txid;
    SELECT array_agg(u.i ORDER BY u.i), array_agg(coalesce(q.dedup_window_seconds = 0, false) ORDER BY u.i)
      INTO v_keep, v_receipt
      FROM unnest(p_queues) WITH ORDINALITY AS u(queue, i)
      LEFT JOIN queen.queues q ON q.name = u.queue
     WHERE u.i <> ALL (coalesce(v_dup_i, '{}'));
    IF v_dup_i IS NOT NULL THEN
        RETURN QUERY
            SELECT p_items[d.i], 'duplicate'::text, d.pid, d.off, NULL::timestamptz
              FROM unnest(v_dup_i, v_dup_pid, v_dup_off) AS d(i, pid, off);
    END IF;
    IF v_keep IS NULL THEN
        RETURN;
    END IF;
    SELECT * INTO k FROM queen.push_part_keys(ARRAY(SELECT p_queues[i] FROM unnest(v_keep) AS i),
                                              ARRAY(SELECT p_partitions[i] FROM unnest(v_keep) AS i));
    SELECT array_agg(v_keep[r.item] ORDER BY r.item), array_agg(r.status ORDER BY r.item),
           array_agg(r.partition_id ORDER BY r.item), array_agg(r.msg_offset ORDER BY r.item),
           array_agg(r.created_at ORDER BY r.item)
      INTO r_item, r_status, r_pid, r_off, r_at
      FROM queen.push(k.queues, k.partitions, k.counts,
                      ARRAY(SELECT p_txids[i] FROM unnest(v_keep) AS i),
                      ARRAY(SELECT p_trace_ids[i] FROM unnest(v_keep) AS i),
                      ARRAY(SELECT p_producers[i] FROM unnest(v_keep) AS i),
                      ARRAY(SELECT p_payloads[i] FROM unnest(v_keep) AS i)) AS r;
    INSERT INTO queen.shard_receipts (queue_name, partition_name, transaction_id, partition_id, msg_offset)
        SELECT p_queues[s.i], p_partitions[s.i], p_txids[s.i], s.pid, s.off
          FROM unnest(r_item, r_status, r_pid, r_off) AS s(i, st, pid, off)
          JOIN unnest(v_keep, v_receipt) AS w(i, receipt) ON w.i = s.i
         WHERE s.st = 'queued' AND w.receipt
        ON CONFLICT DO NOTHING;
    RETURN QUERY
        SELECT p_items[s.i], s.st, s.pid, s.off, s.at FROM unnest(r_item, r_status, r_pid, r_off, r_at) AS s(i, st, pid, off, at);
END;
$$;
COMMENT ON FUNCTION queen.push_part(integer[], integer[], text[], text[], text[], uuid[], text[], text[]) IS
  'queen.push over one shard''s share of a split push; items numbered as in the whole call; retries recognised.';

-- queen.expire_shard_receipts(batch): removes up to `batch` receipts older than ten minutes
-- (a client's retry comes within seconds); how many it removed. Housekeeping calls it.
CREATE OR REPLACE FUNCTION queen.expire_shard_receipts(p_batch integer)
RETURNS bigint
LANGUAGE sql
AS $$
    WITH gone AS (
        DELETE FROM queen.shard_receipts sr
         WHERE (sr.queue_name, sr.partition_name, sr.transaction_id) IN (
               SELECT o.queue_name, o.partition_name, o.transaction_id FROM queen.shard_receipts o
                WHERE o.created_at < now() - interval '10 minutes' LIMIT p_batch)
        RETURNING 1)
    SELECT count(*) FROM gone
$$;
COMMENT ON FUNCTION queen.expire_shard_receipts(integer) IS
  'Removes shard push receipts older than ten minutes (at most p_batch); returns how many.';
