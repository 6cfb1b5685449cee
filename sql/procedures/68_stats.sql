-- The stats snapshot (migration 15; docs/operator-routes.md, "Counts"). For a partition p
-- and a group g with a cursor: lag = head(p) − committed; leased = the uncommitted part of a
-- live lease span; ready = lag − leased. Per partition: total = head; pending, processing
-- and completed are the largest ready, leased and committed over its groups (everything is
-- ready on a partition without a cursor); deadLetter counts its dead letters. Listings read
-- the newest complete snapshot, summed over its pages; no push, pop or ack writes here.

-- queen.stats_lock_key(): the session advisory lock of a refresh in progress, on any broker.
CREATE OR REPLACE FUNCTION queen.stats_lock_key()
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT x'5354'::bigint << 48 $$;
COMMENT ON FUNCTION queen.stats_lock_key() IS
  'Session advisory lock key held by the stats refresh in progress.';

-- queen.cursor_counts gained a column (consumed): drop an older form where it is installed.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_proc
                WHERE oid = to_regprocedure('queen.cursor_counts(bigint[])')
                  AND NOT ('consumed' = ANY (proargnames))) THEN
        DROP FUNCTION queen.cursor_counts(bigint[]);
    END IF;
END
$$;

-- queen.cursor_counts(partition ids): every cursor of those partitions with its lag, leased
-- count and dead letters (the rule above, in one place); the cursors come from
-- queen.partition_cursors, which does not visit the versions a held snapshot keeps.
CREATE OR REPLACE FUNCTION queen.cursor_counts(p_partition_ids bigint[])
RETURNS TABLE(partition_id bigint, queue_id bigint, consumer_group text, committed bigint, head bigint,
              lag bigint, leased bigint, live boolean, ready_at timestamptz, lease_id uuid,
              lease_expires_at timestamptz, dead_letters bigint, consumed boolean)
LANGUAGE sql STABLE
AS $$
    SELECT c.partition_id, c.queue_id, c.consumer_group, c.committed, h.last_offset,
           greatest(h.last_offset - c.committed, 0),
           CASE WHEN l.live THEN greatest(least(c.lease_end, h.last_offset) - c.committed, 0) ELSE 0 END,
           l.live, c.ready_at, CASE WHEN l.live THEN c.lease_id END, CASE WHEN l.live THEN c.lease_expires_at END,
           (SELECT count(*) FROM queen.dead_letters d
             WHERE d.partition_id = c.partition_id AND d.consumer_group = c.consumer_group),
           queen.cursor_consumed(c.last_claimed_at, c.committed_at)
      FROM queen.partition_cursors(p_partition_ids) c
     CROSS JOIN LATERAL queen.partition_head(c.partition_id) h
     CROSS JOIN LATERAL (SELECT coalesce(c.lease_id IS NOT NULL AND c.lease_expires_at > now(), false) AS live) l
$$;
COMMENT ON FUNCTION queen.cursor_counts(bigint[]) IS
  'Per cursor of the given partitions: lag, leased count, live lease, dead letters and whether it consumed.';

-- queen.partition_stats(partition ids): per partition total, pending, processing, completed
-- and dead letters (the rule above), its newest createdAt, and the createdAt of the oldest
-- message its slowest group has not committed (every stored message counts without a cursor).
CREATE OR REPLACE FUNCTION queen.partition_stats(p_partition_ids bigint[])
RETURNS TABLE(partition_id bigint, queue_id bigint, total bigint, pending bigint, processing bigint,
              completed bigint, dead_letter bigint, newest_at timestamptz, oldest_waiting_at timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT p.id, p.queue_id, h.last_offset,
           coalesce(g.ready, h.last_offset), coalesce(g.leased, 0), coalesce(g.committed, 0),
           (SELECT count(*) FROM queen.dead_letters d WHERE d.partition_id = p.id),
           CASE WHEN h.last_offset > 0 THEN h.last_created_at END,
           CASE WHEN g.partition_id IS NOT NULL THEN g.oldest
                ELSE (SELECT s.created_at FROM queen.log_segments s WHERE s.partition_id = p.id
                       ORDER BY s.last_offset LIMIT 1) END
      FROM unnest(p_partition_ids) AS u(id)
      JOIN queen.log_partitions p ON p.id = u.id
     CROSS JOIN LATERAL queen.partition_head(p.id) h
      LEFT JOIN LATERAL (
        SELECT c.partition_id, max(c.lag - c.leased) AS ready, max(c.leased) AS leased,
               max(c.committed) AS committed, min(c.ready_at) FILTER (WHERE c.lag > 0) AS oldest
          FROM queen.cursor_counts(ARRAY[p.id]) c
         GROUP BY c.partition_id) g ON true
$$;
COMMENT ON FUNCTION queen.partition_stats(bigint[]) IS
  'Per partition: total, pending, processing, completed and dead letters, newest and oldest waiting createdAt.';

-- queen.stats_page(snapshot, page, after partition id, page size, count bytes): writes the
-- queue and group rows of the next page of partitions (id order, after the given id) into a
-- snapshot; the last partition id of the page and how many partitions it held (0: the pass is
-- done). With count bytes, each queue row also sums its segments' stored sizes (read from every
-- segment row, so only when QUEEN_TENANT_MAX_BYTES asks for it); else stored_bytes is 0.
DROP FUNCTION IF EXISTS queen.stats_page(bigint, integer, bigint, integer);  -- it gained p_count_bytes
CREATE OR REPLACE FUNCTION queen.stats_page(p_snapshot_id bigint, p_page integer, p_after bigint, p_size integer,
                                            p_count_bytes boolean DEFAULT false)
RETURNS TABLE(last_partition_id bigint, partitions integer)
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
-- A bitmap scan of a cursor's key visits every version of it before sorting them, and under a
-- held snapshot none can be pruned; the ordered scan of the key index in partition_cursors
-- stops at the newest (51_cursor_versions.sql).
SET enable_bitmapscan = off
AS $$
DECLARE
    v_ids      bigint[];
    v_previous bigint;  -- the newest partition the previous complete snapshot saw
BEGIN
    SELECT array_agg(pt.id ORDER BY pt.id) INTO v_ids
      FROM (SELECT p.id FROM queen.log_partitions p WHERE p.id > p_after ORDER BY p.id LIMIT p_size) pt;
    IF v_ids IS NULL THEN
        RETURN QUERY SELECT p_after, 0;
        RETURN;
    END IF;
    SELECT s.last_partition_id INTO v_previous
      FROM queen.stats_snapshots s WHERE s.id < p_snapshot_id AND s.taken_at IS NOT NULL
     ORDER BY s.id DESC LIMIT 1;
    -- The first snapshot of a database counts every partition as new; after one taken before
    -- migration 17 (no last_partition_id) none counts.
    IF NOT FOUND THEN
        v_previous := 0;
    END IF;
    INSERT INTO queen.queue_stats (snapshot_id, page, queue_id, partitions, total, pending, processing,
                                   completed, dead_letter, newest_at, created_since_previous,
                                   partitions_with_dead_letters, stored_bytes)
    SELECT p_snapshot_id, p_page, ps.queue_id, count(*), sum(ps.total), sum(ps.pending), sum(ps.processing),
           sum(ps.completed), sum(ps.dead_letter), max(ps.newest_at),
           count(*) FILTER (WHERE ps.partition_id > v_previous), count(*) FILTER (WHERE ps.dead_letter > 0),
           coalesce(sum(b.bytes), 0)
      FROM queen.partition_stats(v_ids) ps
     -- pg_column_size: a segment's stored size (after compression), read from its row without
     -- fetching a TOASTed body; the subquery runs only when bytes are counted.
     CROSS JOIN LATERAL (SELECT CASE WHEN p_count_bytes THEN
                                    (SELECT sum(pg_column_size(s.body)) FROM queen.log_segments s
                                      WHERE s.partition_id = ps.partition_id) END AS bytes) b
     GROUP BY ps.queue_id;
    INSERT INTO queen.group_stats (snapshot_id, page, queue_id, consumer_group, cursors, partitions_with_lag,
                                   lag, ready, leased, max_lag, committed, oldest_waiting_at,
                                   oldest_leased_at, dead_letters, members)
    SELECT p_snapshot_id, p_page, c.queue_id, c.consumer_group, count(*), count(*) FILTER (WHERE c.lag > 0),
           sum(c.lag), sum(c.lag - c.leased), sum(c.leased), max(c.lag), sum(c.committed),
           min(c.ready_at) FILTER (WHERE c.lag > 0), min(c.ready_at) FILTER (WHERE c.leased > 0),
           sum(c.dead_letters), count(*) FILTER (WHERE c.consumed)
      FROM queen.cursor_counts(v_ids) c
     GROUP BY c.queue_id, c.consumer_group;
    RETURN QUERY SELECT v_ids[array_length(v_ids, 1)], array_length(v_ids, 1);
END;
$$;
COMMENT ON FUNCTION queen.stats_page(bigint, integer, bigint, integer, boolean) IS
  'Writes one page of partitions (id order) into a stats snapshot; its last partition id and size.';

-- queen.refresh_stats(page size, …, count bytes): a new snapshot, one page of partitions per
-- transaction, then every snapshot but this one and the one before it is deleted (readers of
-- the previous one may still be reading). Holds the stats lock for the pass; when another
-- session holds it, returns skipped = true and writes nothing. Bytes are counted (see
-- queen.stats_page) with p_count_bytes or while a broker wants them (queen.tenant_usage).
-- CALL it outside a transaction block.
DROP PROCEDURE IF EXISTS queen.refresh_stats(integer, boolean, bigint, bigint, bigint, timestamptz, integer);
CREATE OR REPLACE PROCEDURE queen.refresh_stats(
    p_page_size integer DEFAULT 10000,
    INOUT skipped boolean DEFAULT false, INOUT snapshot_id bigint DEFAULT NULL,
    INOUT partitions bigint DEFAULT 0, INOUT queues bigint DEFAULT 0,
    INOUT taken_at timestamptz DEFAULT NULL, INOUT duration_ms integer DEFAULT 0,
    p_count_bytes boolean DEFAULT false)
LANGUAGE plpgsql
AS $$
DECLARE
    v_after bigint := 0;
    v_page  integer := 0;
    v_n     integer;
    v_start timestamptz := clock_timestamp();
    v_count_bytes boolean;
BEGIN
    IF p_page_size < 1 THEN
        RAISE EXCEPTION 'refresh_stats: the page size must be at least 1' USING ERRCODE = '22023';
    END IF;
    skipped := NOT pg_try_advisory_lock(queen.stats_lock_key());
    partitions := 0;
    IF skipped THEN
        RETURN;
    END IF;
    v_count_bytes := coalesce(p_count_bytes, false)
                     OR EXISTS (SELECT 1 FROM queen.stored_bytes_wanted w WHERE w.until > now());
    INSERT INTO queen.stats_snapshots (started_at) VALUES (v_start) RETURNING id INTO snapshot_id;
    COMMIT;
    LOOP
        v_page := v_page + 1;
        SELECT s.last_partition_id, s.partitions INTO v_after, v_n
          FROM queen.stats_page(snapshot_id, v_page, v_after, p_page_size, v_count_bytes) s;
        COMMIT;
        EXIT WHEN v_n = 0;
        partitions := partitions + v_n;
    END LOOP;
    SELECT count(*) INTO queues FROM queen.queues;
    taken_at := clock_timestamp();
    duration_ms := (extract(epoch FROM taken_at - v_start) * 1000)::integer;
    UPDATE queen.stats_snapshots s
       SET taken_at = refresh_stats.taken_at, duration_ms = refresh_stats.duration_ms,
           partitions = refresh_stats.partitions, queues = refresh_stats.queues, last_partition_id = v_after
     WHERE s.id = snapshot_id;
    PERFORM queen.record_partition_activity(snapshot_id);
    DELETE FROM queen.queue_stats s WHERE s.snapshot_id < (
        SELECT coalesce(max(p.id), 0) FROM queen.stats_snapshots p
         WHERE p.id < refresh_stats.snapshot_id AND p.taken_at IS NOT NULL);
    DELETE FROM queen.group_stats s WHERE s.snapshot_id < (
        SELECT coalesce(max(p.id), 0) FROM queen.stats_snapshots p
         WHERE p.id < refresh_stats.snapshot_id AND p.taken_at IS NOT NULL);
    DELETE FROM queen.stats_snapshots s WHERE s.id < (
        SELECT coalesce(max(p.id), 0) FROM queen.stats_snapshots p
         WHERE p.id < refresh_stats.snapshot_id AND p.taken_at IS NOT NULL);
    COMMIT;
    PERFORM pg_advisory_unlock(queen.stats_lock_key());
END;
$$;
COMMENT ON PROCEDURE queen.refresh_stats(integer, boolean, bigint, bigint, bigint, timestamptz, integer, boolean) IS
  'Writes a new stats snapshot page by page (one transaction each) and drops the older ones.';

-- queen.stats_snapshot_id(): the newest complete snapshot (NULL before the first).
CREATE OR REPLACE FUNCTION queen.stats_snapshot_id()
RETURNS bigint
LANGUAGE sql STABLE
AS $$ SELECT max(s.id) FROM queen.stats_snapshots s WHERE s.taken_at IS NOT NULL $$;
COMMENT ON FUNCTION queen.stats_snapshot_id() IS
  'Id of the newest complete stats snapshot, NULL before the first.';

-- queen.stats_age(): seconds since the newest complete snapshot was taken, -1 before the first.
CREATE OR REPLACE FUNCTION queen.stats_age()
RETURNS integer
LANGUAGE sql STABLE
AS $$
    -- now() is the reader's transaction start, which can precede a snapshot committed while the
    -- transaction runs: such a snapshot is 0 seconds old, not -1.
    SELECT CASE WHEN max(s.taken_at) IS NULL THEN -1
                ELSE greatest(floor(extract(epoch FROM now() - max(s.taken_at))), 0)::integer END
      FROM queen.stats_snapshots s WHERE s.taken_at IS NOT NULL
$$;
COMMENT ON FUNCTION queen.stats_age() IS
  'Age in seconds of the newest complete stats snapshot; -1 before the first.';
