-- Migration 12: each cursor knows the createdAt of its oldest waiting message (ready_at, NULL
-- when it has none), so that a pop finds the claimable partition whose oldest waiting
-- message is oldest through an index instead of by looking at every partition
-- (docs/architecture.md, "Claiming a partition"). Maintained by a trigger on every change of
-- committed and by every push (sql/procedures/52_cursor_ready.sql).
ALTER TABLE queen.log_consumers ADD COLUMN ready_at timestamptz;
UPDATE queen.log_consumers c
   SET ready_at = (SELECT s.created_at FROM queen.log_segments s
                    WHERE s.partition_id = c.partition_id AND s.last_offset > c.committed
                    ORDER BY s.last_offset LIMIT 1);
CREATE INDEX log_consumers_ready ON queen.log_consumers (queue_id, consumer_group, ready_at, partition_id)
    WHERE ready_at IS NOT NULL;
