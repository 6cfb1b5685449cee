-- A partition's head comes from its newest segment; the partition row is a floor that only
-- retention writes (32_partition_head.sql).
SELECT queen.configure('ph_q', NULL, NULL, '{}'::jsonb) IS NOT NULL AS configured;
SELECT count(*) FROM queen.push(ARRAY['ph_q'], ARRAY['p'], ARRAY[3], ARRAY['a','b','c'],
                                ARRAY[NULL,NULL,NULL]::uuid[], ARRAY[NULL,NULL,NULL]::text[], ARRAY['1','2','3']);
SELECT count(*) FROM queen.push(ARRAY['ph_q'], ARRAY['p'], ARRAY[2], ARRAY['d','e'],
                                ARRAY[NULL,NULL]::uuid[], ARRAY[NULL,NULL]::text[], ARRAY['4','5']);
SELECT id AS pid FROM queen.log_partitions WHERE name = 'p' \gset
-- pushes leave the partition row as it was created
SELECT last_offset AS floor, last_created_at IS NULL AS no_floor_time, last_push_at IS NULL AS no_floor_push
  FROM queen.log_partitions WHERE id = :pid;
SELECT queen.partition_last_offset(:pid) AS head,
       queen.partition_last_created_at(:pid) = (SELECT max(created_at) FROM queen.log_segments WHERE partition_id = :pid) AS head_time,
       queen.partition_last_push_at(:pid) IS NOT NULL AS pushed;
-- a partition that never held a message, and one that does not exist
SELECT queen.ensure_partition((SELECT id FROM queen.queues WHERE name = 'ph_q'), 'empty') AS empty \gset
SELECT queen.partition_last_offset(:empty) AS empty_head, queen.partition_last_created_at(:empty) IS NULL AS no_time;
SELECT queen.partition_last_offset(-1) IS NULL AS unknown_head;
-- deleting the older segment leaves the floor alone
SELECT queen.delete_segments(ARRAY[:pid]::bigint[], ARRAY[3]::bigint[]) AS deleted;
SELECT last_offset AS floor, queen.partition_last_offset(:pid) AS head FROM queen.log_partitions WHERE id = :pid;
-- deleting the newest records it as the floor; the head stays and offsets continue after it
SELECT queen.delete_segments(ARRAY[:pid]::bigint[], ARRAY[5]::bigint[]) AS deleted;
SELECT last_offset AS floor, last_created_at IS NOT NULL AS floor_time, queen.partition_last_offset(:pid) AS head,
       (SELECT count(*) FROM queen.log_segments WHERE partition_id = :pid) AS segments
  FROM queen.log_partitions WHERE id = :pid;
SELECT status, msg_offset FROM queen.push(ARRAY['ph_q'], ARRAY['p'], ARRAY[1], ARRAY['f'],
                                          ARRAY[NULL]::uuid[], ARRAY[NULL]::text[], ARRAY['6']);
-- nothing to delete is a no-op
SELECT queen.delete_segments(NULL, NULL) AS deleted;
-- offsets are allocated only at READ COMMITTED: a transaction-wide snapshot could miss a
-- push committed while waiting for the partition lock
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM queen.push(ARRAY['ph_q'], ARRAY['p'], ARRAY[1], ARRAY['g'],
                         ARRAY[NULL]::uuid[], ARRAY[NULL]::text[], ARRAY['7']);
ROLLBACK;
SELECT queen.partition_last_offset(:pid) AS head_unchanged;
SELECT queen.delete_queue('ph_q');
