-- Dead-letter administration: listing, requeue and purge by filter (docs/dead-letters.md).
--
-- The filter, shared by every function here (a NULL argument is no condition; the given
-- conditions combine with AND):
--   p_queue       queue name (an unknown queue matches nothing)
--   p_group       consumer group, exact ('__QUEUE_MODE__' is queue mode)
--   p_partition   partition name (with p_queue: that queue's partition)
--   p_from, p_to  failed_at range, both ends inclusive
--   p_message_id  the id of the dead-lettered message (queen.message_id(partition, offset))
--   p_scope       the tenant scope (sql/procedures/21_tenancy.sql), the last parameter of
--                 each function: only dead letters of its queues (named by stored keys)
--
-- queen.dead_letters_matching(filter) -> SETOF queen.dead_letters: the one definition of
--   the filter. Reads only.
-- queen.count_dead_letters(filter) -> bigint.
-- queen.list_dead_letters(filter, p_limit, p_offset) -> one row per dead letter, newest
--   failure first (failed_at DESC, id DESC). payload, transaction_id, trace_id and
--   producer_sub are decoded where this database can (raw rows, or zstd with queen_ext);
--   where it cannot, `segment` and `segment_first_offset` are set so the caller decodes
--   the frame at msg_offset - segment_first_offset itself. Reads only.
-- queen.dead_letter_segments(filter, p_limit) -> the segment copies of the matching dead
--   letters without a decoded payload, oldest failure first: what the broker decodes (with
--   its own codec) and hands to requeue_dead_letter_set. Reads only.
-- queen.requeue_dead_letter_set(filter, p_all, p_limit, decoded frames...) -> one row per
--   chosen dead letter: status 'requeued' (pushed again as a NEW message: new offset, new
--   id, its original transaction id, trace id, producer and payload; the dedup entry of
--   that transaction id now points at the new offset), 'merged' (another dead letter of
--   the same message, e.g. of another group: removed, the message is requeued once), or
--   'skipped' (kept: its payload cannot be decoded here and was not given, or its
--   partition is gone). Dead letters are chosen oldest failure first (up to p_limit) and
--   appended per partition in order of failure; pushing and deleting happen in the
--   caller's one transaction. The broker passes, for rows whose payload SQL cannot decode,
--   the decoded frames by dead-letter id (p_decoded_*; parallel arrays).
-- queen.requeue_dead_letters(filter, p_all, p_limit) -> (requeued, removed, skipped).
-- queen.purge_dead_letters(filter, p_all) -> bigint: dead letters deleted.
-- Requeue and purge refuse an empty filter (SQLSTATE 22023) unless p_all is true.
--
-- Lock order (requeue): the chosen dead_letters rows FOR UPDATE in id order, then each
--   partition row FOR UPDATE in (queue name, partition name) byte order — the order of
--   queen.push, so requeue and pushes cannot deadlock. A concurrent requeue or purge of
--   the same rows waits and then finds them gone (they are skipped, never pushed twice).
-- Purge locks only the dead_letters rows it deletes.

-- The tenant scope (sql/procedures/21_tenancy.sql) is a new trailing parameter of each: drop
-- the forms without it.
DROP FUNCTION IF EXISTS queen.dead_letters_matching(text, text, text, timestamptz, timestamptz, uuid);
DROP FUNCTION IF EXISTS queen.count_dead_letters(text, text, text, timestamptz, timestamptz, uuid);
DROP FUNCTION IF EXISTS queen.list_dead_letters(text, text, text, timestamptz, timestamptz, uuid, integer, integer);
DROP FUNCTION IF EXISTS queen.dead_letter_segments(text, text, text, timestamptz, timestamptz, uuid, integer);
DROP FUNCTION IF EXISTS queen.requeue_dead_letter_set(text, text, text, timestamptz, timestamptz, uuid, boolean, integer, bigint[], text[], uuid[], text[], text[]);
DROP FUNCTION IF EXISTS queen.requeue_dead_letters(text, text, text, timestamptz, timestamptz, uuid, boolean, integer);
DROP FUNCTION IF EXISTS queen.purge_dead_letters(text, text, text, timestamptz, timestamptz, uuid, boolean);

CREATE OR REPLACE FUNCTION queen.dead_letters_matching(
    p_queue text DEFAULT NULL, p_group text DEFAULT NULL, p_partition text DEFAULT NULL,
    p_from timestamptz DEFAULT NULL, p_to timestamptz DEFAULT NULL, p_message_id uuid DEFAULT NULL,
    p_scope text DEFAULT NULL)
RETURNS SETOF queen.dead_letters
LANGUAGE sql STABLE
AS $$
    SELECT d.*
      FROM queen.dead_letters d
     WHERE (p_queue IS NULL OR d.queue_id = (SELECT q.id FROM queen.queues q WHERE q.name = p_queue))
       AND (p_group IS NULL OR d.consumer_group = p_group)
       AND (p_partition IS NULL OR EXISTS (SELECT 1 FROM queen.log_partitions p
                                            WHERE p.id = d.partition_id AND p.name = p_partition))
       AND (p_from IS NULL OR d.failed_at >= p_from)
       AND (p_to IS NULL OR d.failed_at <= p_to)
       AND (p_message_id IS NULL OR (d.partition_id = queen.message_id_partition(p_message_id)
                                     AND d.msg_offset = queen.message_id_offset(p_message_id)))
       AND (p_scope IS NULL OR EXISTS (SELECT 1 FROM queen.queues q
                                        WHERE q.id = d.queue_id AND queen.in_tenant_scope(q.tenant, p_scope)))
$$;
COMMENT ON FUNCTION queen.dead_letters_matching(text, text, text, timestamptz, timestamptz, uuid, text) IS
  'Dead letters matching the filter (queue, group, partition, failed_at range, message id); NULL = any.';

CREATE OR REPLACE FUNCTION queen.count_dead_letters(
    p_queue text DEFAULT NULL, p_group text DEFAULT NULL, p_partition text DEFAULT NULL,
    p_from timestamptz DEFAULT NULL, p_to timestamptz DEFAULT NULL, p_message_id uuid DEFAULT NULL,
    p_scope text DEFAULT NULL)
RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT count(*) FROM queen.dead_letters_matching(p_queue, p_group, p_partition, p_from, p_to, p_message_id, p_scope)
$$;
COMMENT ON FUNCTION queen.count_dead_letters(text, text, text, timestamptz, timestamptz, uuid, text) IS
  'Number of dead letters matching the filter.';

CREATE OR REPLACE FUNCTION queen.list_dead_letters(
    p_queue text DEFAULT NULL, p_group text DEFAULT NULL, p_partition text DEFAULT NULL,
    p_from timestamptz DEFAULT NULL, p_to timestamptz DEFAULT NULL, p_message_id uuid DEFAULT NULL,
    p_limit integer DEFAULT 100, p_offset integer DEFAULT 0,
    p_scope text DEFAULT NULL)
RETURNS TABLE(dead_letter_id bigint, message_id uuid, queue text, partition text, partition_id bigint,
              msg_offset bigint, consumer_group text, transaction_id text, trace_id uuid, producer_sub text,
              payload text, segment bytea, segment_first_offset bigint, error_message text, attempts integer,
              reason text, created_at timestamptz, failed_at timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT pg.id, queen.message_id(pg.partition_id, pg.msg_offset), q.name, p.name, pg.partition_id,
           pg.msg_offset, pg.consumer_group,
           coalesce(pg.transaction_id, f.transaction_id), coalesce(pg.trace_id, f.trace_id),
           coalesce(pg.producer_sub, f.producer_sub), coalesce(pg.payload, f.payload),
           CASE WHEN pg.payload IS NULL AND f.payload IS NULL THEN pg.segment END,
           CASE WHEN pg.payload IS NULL AND f.payload IS NULL THEN pg.seg_first END,
           pg.error_message, pg.attempts, pg.reason, pg.created_at, pg.failed_at
      FROM (SELECT d.*,
                   CASE WHEN d.payload IS NULL AND d.segment IS NOT NULL
                        THEN queen.dead_letter_segment_first(d.partition_id, d.msg_offset, d.segment_first_offset)
                   END AS seg_first
              FROM queen.dead_letters_matching(p_queue, p_group, p_partition, p_from, p_to, p_message_id, p_scope) d
             ORDER BY d.failed_at DESC, d.id DESC
             LIMIT p_limit OFFSET p_offset) pg
      LEFT JOIN queen.queues q ON q.id = pg.queue_id
      LEFT JOIN queen.log_partitions p ON p.id = pg.partition_id
      LEFT JOIN LATERAL (SELECT fr.transaction_id, fr.trace_id, fr.producer_sub, fr.payload
                           FROM queen.decode_segment(CASE WHEN pg.payload IS NULL THEN pg.segment END) fr
                          WHERE fr.idx = pg.msg_offset - pg.seg_first) f ON true
     ORDER BY pg.failed_at DESC, pg.id DESC
$$;
COMMENT ON FUNCTION queen.list_dead_letters(text, text, text, timestamptz, timestamptz, uuid, integer, integer, text) IS
  'A page of the dead letters matching the filter, newest failure first; segment is set only where SQL could not decode the payload.';

CREATE OR REPLACE FUNCTION queen.dead_letter_segments(
    p_queue text DEFAULT NULL, p_group text DEFAULT NULL, p_partition text DEFAULT NULL,
    p_from timestamptz DEFAULT NULL, p_to timestamptz DEFAULT NULL, p_message_id uuid DEFAULT NULL,
    p_limit integer DEFAULT NULL,
    p_scope text DEFAULT NULL)
RETURNS TABLE(dead_letter_id bigint, msg_offset bigint, segment_first_offset bigint, segment bytea)
LANGUAGE sql STABLE
AS $$
    SELECT d.id, d.msg_offset,
           queen.dead_letter_segment_first(d.partition_id, d.msg_offset, d.segment_first_offset), d.segment
      FROM queen.dead_letters_matching(p_queue, p_group, p_partition, p_from, p_to, p_message_id, p_scope) d
     WHERE d.payload IS NULL AND d.segment IS NOT NULL
     ORDER BY d.failed_at, d.id
     LIMIT p_limit
$$;
COMMENT ON FUNCTION queen.dead_letter_segments(text, text, text, timestamptz, timestamptz, uuid, integer, text) IS
  'Segment copies of the matching dead letters whose payload was not decoded, oldest failure first: what the broker decodes before a requeue.';

CREATE OR REPLACE FUNCTION queen.requeue_dead_letter_set(
    p_queue text DEFAULT NULL, p_group text DEFAULT NULL, p_partition text DEFAULT NULL,
    p_from timestamptz DEFAULT NULL, p_to timestamptz DEFAULT NULL, p_message_id uuid DEFAULT NULL,
    p_all boolean DEFAULT false, p_limit integer DEFAULT NULL,
    p_decoded_ids bigint[] DEFAULT '{}', p_decoded_txids text[] DEFAULT '{}',
    p_decoded_trace_ids uuid[] DEFAULT '{}', p_decoded_producers text[] DEFAULT '{}',
    p_decoded_payloads text[] DEFAULT '{}',
    p_scope text DEFAULT NULL)
RETURNS TABLE(dead_letter_id bigint, status text, queue_name text, partition_name text, partition_id bigint,
              msg_offset bigint, message_id uuid, previous_id uuid, transaction_id text, consumer_group text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    c_segment_max constant integer := 10000;  -- frames per segment, like one push's item limit
    v_ids     bigint[];
    k         record;
    v_last    bigint;
    v_last_at timestamptz;
    v_at      timestamptz;
    v_count   integer;
    r_ids     bigint[];
    r_status  text[];
    r_off     bigint[];
    r_old     bigint[];
    r_txid    text[];
    r_trace   uuid[];
    r_prod    text[];
    r_payload text[];
    r_group   text[];
BEGIN
    PERFORM queen.check_requeue_filter(p_queue, p_group, p_partition, p_from, p_to, p_message_id, p_all, p_limit);
    PERFORM queen.require_read_committed('requeue_dead_letter_set');
    IF cardinality(p_decoded_ids) <> cardinality(p_decoded_txids)
       OR cardinality(p_decoded_ids) <> cardinality(p_decoded_trace_ids)
       OR cardinality(p_decoded_ids) <> cardinality(p_decoded_producers)
       OR cardinality(p_decoded_ids) <> cardinality(p_decoded_payloads) THEN
        RAISE EXCEPTION 'requeue_dead_letters: decoded arrays differ in length' USING ERRCODE = '22023';
    END IF;

    -- The chosen dead letters, oldest failure first, locked in id order.
    SELECT coalesce(array_agg(l.id), '{}') INTO v_ids
      FROM (SELECT d.id
              FROM queen.dead_letters d
             WHERE d.id IN (SELECT m.id
                              FROM queen.dead_letters_matching(p_queue, p_group, p_partition, p_from, p_to,
                                                               p_message_id, p_scope) m
                             ORDER BY m.failed_at, m.id
                             LIMIT p_limit)
             ORDER BY d.id
               FOR UPDATE OF d) l;

    FOR k IN
        SELECT x.pid, p.id IS NOT NULL AS present, q.name AS qname, p.name AS pname,
               q.dedup_window_seconds AS win
          FROM (SELECT DISTINCT dl.partition_id AS pid FROM queen.dead_letters dl WHERE dl.id = ANY (v_ids)) x
          LEFT JOIN queen.log_partitions p ON p.id = x.pid
          LEFT JOIN queen.queues q ON q.id = p.queue_id
         ORDER BY q.name COLLATE "C", p.name COLLATE "C", x.pid
    LOOP
        IF NOT k.present THEN
            RETURN QUERY
                SELECT dl.id, 'skipped'::text, NULL::text, NULL::text, dl.partition_id, NULL::bigint, NULL::uuid,
                       queen.message_id(dl.partition_id, dl.msg_offset), dl.transaction_id, dl.consumer_group
                  FROM queen.dead_letters dl
                 WHERE dl.id = ANY (v_ids) AND dl.partition_id = k.pid
                 ORDER BY dl.failed_at, dl.id;
            CONTINUE;
        END IF;

        PERFORM queen.lock_claim_floors_shared(ARRAY[k.qname]);  -- before the row (53_claim_floor.sql)
        PERFORM 1 FROM queen.log_partitions p WHERE p.id = k.pid FOR UPDATE;
        -- The head, in a statement after the lock (32_partition_head.sql).
        SELECT h.last_offset, h.last_created_at INTO v_last, v_last_at FROM queen.partition_head(k.pid) h;
        -- createdAt never goes backwards within a partition and is no earlier than the clock
        -- after the locks (as in queen.push).
        v_at := greatest(clock_timestamp(), v_last_at);

        WITH src AS (
            SELECT dl.id, dl.msg_offset AS old_off, dl.failed_at, dl.consumer_group AS grp,
                   CASE WHEN dl.payload IS NOT NULL THEN dl.transaction_id
                        WHEN dec.id IS NOT NULL THEN dec.txid ELSE fr.transaction_id END AS txid,
                   CASE WHEN dl.payload IS NOT NULL THEN dl.trace_id
                        WHEN dec.id IS NOT NULL THEN dec.trace ELSE fr.trace_id END AS trace,
                   CASE WHEN dl.payload IS NOT NULL THEN dl.producer_sub
                        WHEN dec.id IS NOT NULL THEN dec.producer ELSE fr.producer_sub END AS prod,
                   coalesce(dl.payload, dec.payload, fr.payload) AS payload
              FROM queen.dead_letters dl
              LEFT JOIN unnest(p_decoded_ids, p_decoded_txids, p_decoded_trace_ids, p_decoded_producers,
                               p_decoded_payloads) AS dec(id, txid, trace, producer, payload)
                ON dec.id = dl.id
              LEFT JOIN LATERAL (
                    SELECT f.transaction_id, f.trace_id, f.producer_sub, f.payload
                      FROM queen.decode_segment(CASE WHEN dl.payload IS NULL AND dec.id IS NULL THEN dl.segment END) f
                     WHERE f.idx = dl.msg_offset - queen.dead_letter_segment_first(dl.partition_id, dl.msg_offset,
                                                                                   dl.segment_first_offset)) fr
                ON true
             WHERE dl.id = ANY (v_ids) AND dl.partition_id = k.pid
        ), ranked AS (
            SELECT s.*, (s.payload IS NOT NULL AND s.txid IS NOT NULL) AS ok,
                   row_number() OVER (PARTITION BY s.old_off, (s.payload IS NOT NULL AND s.txid IS NOT NULL)
                                      ORDER BY s.failed_at, s.id) AS rn
              FROM src s
        ), numbered AS (
            SELECT r.*, (r.ok AND r.rn = 1) AS leader,
                   count(*) FILTER (WHERE r.ok AND r.rn = 1) OVER (ORDER BY r.failed_at, r.id) AS new_rank
              FROM ranked r
        ), resolved AS (
            SELECT n.*,
                   CASE WHEN n.ok THEN v_last + first_value(n.new_rank) OVER (PARTITION BY n.old_off, n.ok
                                                                              ORDER BY n.failed_at, n.id)
                   END AS new_off
              FROM numbered n
        )
        SELECT array_agg(r.id ORDER BY r.failed_at, r.id),
               array_agg(CASE WHEN r.leader THEN 'requeued' WHEN r.ok THEN 'merged' ELSE 'skipped' END
                         ORDER BY r.failed_at, r.id),
               array_agg(r.new_off ORDER BY r.failed_at, r.id),
               array_agg(r.old_off ORDER BY r.failed_at, r.id),
               array_agg(r.txid ORDER BY r.failed_at, r.id),
               array_agg(r.trace ORDER BY r.failed_at, r.id),
               array_agg(r.prod ORDER BY r.failed_at, r.id),
               array_agg(r.payload ORDER BY r.failed_at, r.id),
               array_agg(r.grp ORDER BY r.failed_at, r.id),
               count(*) FILTER (WHERE r.leader)
          INTO r_ids, r_status, r_off, r_old, r_txid, r_trace, r_prod, r_payload, r_group, v_count
          FROM resolved r;

        IF v_count > 0 THEN
            FOR v_chunk IN 0 .. (v_count - 1) / c_segment_max LOOP
                INSERT INTO queen.log_segments (partition_id, first_offset, last_offset, codec, created_at, body)
                SELECT k.pid, v_last + v_chunk * c_segment_max + 1,
                       v_last + least(v_count, (v_chunk + 1) * c_segment_max), get_byte(seg.body, 5), v_at, seg.body
                  FROM (SELECT queen.pack_segment(v_at,
                                   array_agg(x.txid ORDER BY x.off), array_agg(x.trace ORDER BY x.off),
                                   array_agg(x.prod ORDER BY x.off), array_agg(x.payload ORDER BY x.off)) AS body
                          FROM unnest(r_status, r_off, r_txid, r_trace, r_prod, r_payload)
                               AS x(st, off, txid, trace, prod, payload)
                         WHERE x.st = 'requeued'
                           AND x.off > v_last + v_chunk * c_segment_max
                           AND x.off <= v_last + (v_chunk + 1) * c_segment_max) seg;
            END LOOP;

            IF k.win > 0 THEN
                -- The transaction id now names the new message (the newest one if two requeued
                -- messages share it), whatever the dedup window said before.
                INSERT INTO queen.log_dedup AS d (partition_id, transaction_id, msg_offset, created_at)
                SELECT DISTINCT ON (x.txid) k.pid, x.txid, x.off, v_at
                  FROM unnest(r_status, r_off, r_txid) AS x(st, off, txid)
                 WHERE x.st = 'requeued'
                 ORDER BY x.txid, x.off DESC
                ON CONFLICT (partition_id, transaction_id)
                DO UPDATE SET msg_offset = EXCLUDED.msg_offset, created_at = EXCLUDED.created_at;
            END IF;

            PERFORM queen.mark_ready(ARRAY[k.pid], ARRAY[v_at]);

            DELETE FROM queen.dead_letters dl
             USING unnest(r_ids, r_status) AS x(id, st)
             WHERE dl.id = x.id AND x.st IN ('requeued', 'merged');
        END IF;

        RETURN QUERY
            SELECT x.id, x.st, k.qname, k.pname, k.pid, x.off,
                   CASE WHEN x.off IS NOT NULL THEN queen.message_id(k.pid, x.off) END,
                   queen.message_id(k.pid, x.old), x.txid, x.grp
              FROM unnest(r_ids, r_status, r_off, r_old, r_txid, r_group) WITH ORDINALITY
                   AS x(id, st, off, old, txid, grp, ord)
             ORDER BY x.ord;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION queen.requeue_dead_letter_set(text, text, text, timestamptz, timestamptz, uuid, boolean, integer,
                                                  bigint[], text[], uuid[], text[], text[], text) IS
  'Pushes the matching dead letters back to their partitions as new messages with their transaction ids; one row per dead letter.';

CREATE OR REPLACE FUNCTION queen.requeue_dead_letters(
    p_queue text DEFAULT NULL, p_group text DEFAULT NULL, p_partition text DEFAULT NULL,
    p_from timestamptz DEFAULT NULL, p_to timestamptz DEFAULT NULL, p_message_id uuid DEFAULT NULL,
    p_all boolean DEFAULT false, p_limit integer DEFAULT NULL,
    p_scope text DEFAULT NULL)
RETURNS TABLE(requeued bigint, removed bigint, skipped bigint)
LANGUAGE sql
AS $$
    SELECT count(*) FILTER (WHERE r.status = 'requeued'),
           count(*) FILTER (WHERE r.status IN ('requeued', 'merged')),
           count(*) FILTER (WHERE r.status = 'skipped')
      FROM queen.requeue_dead_letter_set(p_queue, p_group, p_partition, p_from, p_to, p_message_id,
                                         p_all, p_limit, p_scope => p_scope) r
$$;
COMMENT ON FUNCTION queen.requeue_dead_letters(text, text, text, timestamptz, timestamptz, uuid, boolean, integer, text) IS
  'Requeues the matching dead letters (see requeue_dead_letter_set); counts of messages requeued, dead letters removed and skipped.';

CREATE OR REPLACE FUNCTION queen.purge_dead_letters(
    p_queue text DEFAULT NULL, p_group text DEFAULT NULL, p_partition text DEFAULT NULL,
    p_from timestamptz DEFAULT NULL, p_to timestamptz DEFAULT NULL, p_message_id uuid DEFAULT NULL,
    p_all boolean DEFAULT false,
    p_scope text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
AS $$
DECLARE
    v_n bigint;
BEGIN
    IF NOT coalesce(p_all, false) AND p_queue IS NULL AND p_group IS NULL AND p_partition IS NULL
       AND p_from IS NULL AND p_to IS NULL AND p_message_id IS NULL THEN
        RAISE EXCEPTION 'purge_dead_letters: no filter given; pass p_all => true to purge every dead letter'
            USING ERRCODE = '22023';
    END IF;
    DELETE FROM queen.dead_letters d
     WHERE d.id IN (SELECT m.id FROM queen.dead_letters_matching(p_queue, p_group, p_partition, p_from, p_to,
                                                                 p_message_id, p_scope) m);
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n;
END;
$$;
COMMENT ON FUNCTION queen.purge_dead_letters(text, text, text, timestamptz, timestamptz, uuid, boolean, text) IS
  'Deletes the dead letters matching the filter; refuses an empty filter unless p_all. Returns how many.';

-- queen.dead_letter_failures(filter, limit): the matching dead letters' failure times and ids,
-- oldest failure first, at most p_limit: what a requeue with that limit would take here. The
-- proxy merges every shard's to share a limit out (sql/shards/75_dead_letter_admin.sql).
CREATE OR REPLACE FUNCTION queen.dead_letter_failures(
    p_queue text DEFAULT NULL, p_group text DEFAULT NULL, p_partition text DEFAULT NULL,
    p_from timestamptz DEFAULT NULL, p_to timestamptz DEFAULT NULL, p_message_id uuid DEFAULT NULL,
    p_limit integer DEFAULT NULL, p_scope text DEFAULT NULL)
RETURNS TABLE(failed_at timestamptz, dead_letter_id bigint)
LANGUAGE sql STABLE
AS $$
    SELECT m.failed_at, m.id
      FROM queen.dead_letters_matching(p_queue, p_group, p_partition, p_from, p_to, p_message_id, p_scope) m
     ORDER BY m.failed_at, m.id
     LIMIT p_limit
$$;
COMMENT ON FUNCTION queen.dead_letter_failures(text, text, text, timestamptz, timestamptz, uuid, integer, text) IS
  'Failure times and ids of the matching dead letters, oldest first, at most p_limit.';
