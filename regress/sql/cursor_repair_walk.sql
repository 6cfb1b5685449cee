-- Housekeeping's cursor repair (queen.repair_cursors, sql/procedures/85_housekeeping.sql) walks
-- the partitions a batch at a time from where its previous round stopped, so a round costs its
-- batch, not every partition of the database; at the end it continues from the lowest id.
SET client_min_messages = warning;
\set VERBOSITY terse

-- four partitions of one message, a group registered on them, every ready_at lost
SELECT count(*) AS pushed FROM (
    SELECT queen.push(ARRAY['walk_q'], ARRAY['w' || i], ARRAY[1], ARRAY['t' || i], ARRAY[NULL::uuid],
                      ARRAY[NULL::text], ARRAY['{}'])
      FROM generate_series(1, 4) i) s;
SELECT count(*) AS registered FROM queen.pop('walk_q', 'none', 'g', 1, 1, false, true, NULL);
UPDATE queen.log_consumers lc SET ready_at = NULL
  FROM queen.log_partitions p WHERE p.id = lc.partition_id AND p.name LIKE 'w_' AND lc.consumer_group = 'g';
CREATE TEMP VIEW walk AS
SELECT p.name, lc.ready_at IS NOT NULL AS ready
  FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id
  JOIN queen.queues q ON q.id = p.queue_id
 WHERE q.name = 'walk_q' AND lc.consumer_group = 'g' AND p.name LIKE 'w_';

-- the walk stands just before w1: a round of two repairs w1 and w2 only, and stops at w2
SELECT setval('queen.cursor_repair_position', (SELECT min(p.id) - 1 FROM queen.log_partitions p
                                                 JOIN queen.queues q ON q.id = p.queue_id
                                                WHERE q.name = 'walk_q' AND p.name = 'w1')) >= 0 AS placed;
SELECT queen.repair_cursors(2) AS created;
SELECT * FROM walk ORDER BY name;
SELECT (SELECT last_value FROM queen.cursor_repair_position)
     = (SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
         WHERE q.name = 'walk_q' AND p.name = 'w2') AS stopped_at_w2;
-- the next round goes on from there
SELECT queen.repair_cursors(2) AS created;
SELECT * FROM walk ORDER BY name;

-- a missing cursor is created when the walk reaches its partition
DELETE FROM queen.log_consumers lc USING queen.log_partitions p
 WHERE p.id = lc.partition_id AND p.name = 'w3' AND lc.consumer_group = 'g'
   AND p.queue_id = (SELECT id FROM queen.queues WHERE name = 'walk_q');
SELECT setval('queen.cursor_repair_position', (SELECT min(p.id) - 1 FROM queen.log_partitions p
                                                 JOIN queen.queues q ON q.id = p.queue_id
                                                WHERE q.name = 'walk_q' AND p.name = 'w3')) >= 0 AS placed;
SELECT queen.repair_cursors(1) AS created;
SELECT count(*) AS w3_cursors FROM walk WHERE name = 'w3';

-- past the last partition the walk starts again from the lowest id: a batch larger than the
-- database checks it whole
SELECT setval('queen.cursor_repair_position', (SELECT max(id) FROM queen.log_partitions)) >= 0 AS at_end;
UPDATE queen.log_consumers lc SET ready_at = NULL
  FROM queen.log_partitions p WHERE p.id = lc.partition_id AND p.name = 'w4' AND lc.consumer_group = 'g';
SELECT queen.repair_cursors(10000) AS created;
SELECT * FROM walk ORDER BY name;

DROP VIEW walk;
SELECT queen.delete_queue('walk_q') AS deleted;
SELECT count(*) AS unregistered FROM queen.delete_group('g', NULL, true);
