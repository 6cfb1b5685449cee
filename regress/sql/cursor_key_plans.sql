-- Cursor key lookups read the newest version first and stop there (sql/procedures/
-- 51_cursor_versions.sql). With many versions of one cursor that no vacuum has removed (as
-- under a held snapshot), the planner prefers a bitmap scan of the key, which reads every
-- version's index entry before sorting them; queen.lock_cursors and queen.mark_ready run with
-- settings that leave the ordered scan. Measured here as the index entries of
-- log_consumers_version each call reads (this transaction's statistics).
SET client_min_messages = warning;
\set VERBOSITY terse

-- 20 partitions with one message each and a cursor of group g on each
SELECT count(*) AS pushed FROM (
    SELECT queen.push(ARRAY['plans_q'], ARRAY['p' || i], ARRAY[1], ARRAY['t' || i],
                      ARRAY[NULL::uuid], ARRAY[NULL::text], ARRAY['{}'])
      FROM generate_series(1, 20) i) s;
SELECT count(*) AS popped FROM (
    SELECT queen.pop('plans_q', NULL, 'g', 1, 1, false, true, NULL) FROM generate_series(1, 20)) s;

-- this test's cursors and partitions (other tests' rows stay untouched); each measurement
-- below reads partitions of its own, whose old entries no earlier scan has seen
CREATE VIEW pg_temp.parts AS
    SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
     WHERE q.name = 'plans_q';
CREATE FUNCTION pg_temp.part(n int) RETURNS bigint LANGUAGE sql AS $$
    SELECT id FROM pg_temp.parts ORDER BY id OFFSET n - 1 LIMIT 1
$$;

-- 300 versions of every cursor, none removed: no vacuum, and no index scan has marked the old
-- entries dead (an index scan that meets dead entries marks them, and later scans skip them)
ALTER TABLE queen.log_consumers SET (autovacuum_enabled = false);
BEGIN;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = off;
DO $$ BEGIN
    FOR i IN 1..300 LOOP
        UPDATE queen.log_consumers SET lease_expires_at = lease_expires_at
         WHERE partition_id IN (SELECT id FROM pg_temp.parts);
    END LOOP;
END $$;
SELECT count(*) AS cursors, min(version) AS min_version, max(version) AS max_version
  FROM queen.log_consumers WHERE partition_id IN (SELECT id FROM pg_temp.parts);
COMMIT;
ANALYZE queen.log_consumers;

-- index entries of the key index read by one call of a statement
CREATE FUNCTION pg_temp.key_entries_read(stmt text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    before bigint := pg_stat_get_xact_tuples_returned('queen.log_consumers_version'::regclass);
BEGIN
    EXECUTE stmt;
    RETURN pg_stat_get_xact_tuples_returned('queen.log_consumers_version'::regclass) - before;
END;
$$;

-- the newest-first lookup under the planner's defaults reads every version of the key: what
-- the settings of the functions below are for
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL plan_cache_mode = force_generic_plan;
PREPARE newest(bigint, text) AS
    SELECT lc.ctid FROM queen.log_consumers lc
     WHERE lc.partition_id = $1 AND lc.consumer_group = $2
     ORDER BY lc.version DESC LIMIT 1 FOR UPDATE;
SELECT pg_temp.key_entries_read(format($q$EXECUTE newest(%s, 'g')$q$, pg_temp.part(1)))
       AS default_plan_entries;
DEALLOCATE newest;
ROLLBACK;

-- lock_cursors: one entry per cursor
BEGIN;
SELECT pg_temp.key_entries_read(format($q$SELECT queen.lock_cursors('g', ARRAY[%s, %s])$q$,
           pg_temp.part(2), pg_temp.part(3))) AS lock_cursors_entries;
ROLLBACK;

-- mark_ready: one entry per cursor of the partition, and it writes the newest version
BEGIN;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = off;
UPDATE queen.log_consumers SET ready_at = NULL WHERE partition_id = pg_temp.part(4);
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT pg_temp.key_entries_read(format($q$SELECT queen.mark_ready(ARRAY[%s], ARRAY[now()])$q$,
           pg_temp.part(4))) AS mark_ready_entries;
SELECT version, ready_at = now() AS ready_now FROM queen.log_consumers
 WHERE partition_id = pg_temp.part(4);
ROLLBACK;

-- cursor_counts: one row per cursor, its visible version; inside stats_page (the periodic
-- stats snapshot), whose settings leave the ordered scan, one key entry per cursor for
-- partition_stats and one for the group rows
BEGIN;
SELECT count(*) AS cursors, bool_and(c.committed = lc.committed AND c.ready_at IS NOT DISTINCT FROM lc.ready_at)
       AS visible_values
  FROM queen.cursor_counts((SELECT array_agg(id) FROM pg_temp.parts)) c
  JOIN queen.log_consumers lc ON lc.partition_id = c.partition_id AND lc.consumer_group = c.consumer_group;
INSERT INTO queen.stats_snapshots (started_at) VALUES (now());
SELECT pg_temp.key_entries_read(format($q$SELECT queen.stats_page(%s, 1, %s, 2)$q$,
           (SELECT max(id) FROM queen.stats_snapshots), pg_temp.part(7) - 1)) AS stats_page_entries;
SELECT cursors, lag FROM queen.group_stats WHERE snapshot_id = (SELECT max(id) FROM queen.stats_snapshots);
ROLLBACK;

-- the operator's per-queue counts computed now, under the planner's defaults (queue_detail:
-- GET /api/v1/resources/queues/Q; status_queue_partitions: GET /api/v1/status/queues/Q):
-- queue_detail one key entry per cursor, plus the two versions that mark_ready's rolled-back
-- updates above left on one cursor (the scan marks them dead); status_queue_partitions two
-- per cursor, its counts and its consumption. Each read all 301 versions before.
SELECT pg_temp.key_entries_read($q$SELECT count(*) FROM queen.queue_detail('plans_q')$q$) AS queue_detail_entries;
SELECT pg_temp.key_entries_read($q$SELECT count(*) FROM queen.status_queue_partitions('plans_q')$q$)
       AS status_queue_partitions_entries;
SELECT count(*) AS partitions, sum("messages.total") AS total, sum("cursor.totalConsumed") AS consumed
  FROM queen.status_queue_partitions('plans_q');

-- the tids lock_cursors returns are the newest versions'
BEGIN;
SELECT count(*) AS newest_tids
  FROM unnest(queen.lock_cursors('g', (SELECT array_agg(id) FROM pg_temp.parts))) t(tid)
  JOIN queen.log_consumers lc ON lc.ctid = t.tid
 WHERE lc.version = (SELECT max(v.version) FROM queen.log_consumers v
                      WHERE v.partition_id = lc.partition_id AND v.consumer_group = lc.consumer_group);
ROLLBACK;

ALTER TABLE queen.log_consumers RESET (autovacuum_enabled);
SELECT queen.delete_queue('plans_q') AS deleted;
