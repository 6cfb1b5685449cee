-- Migration 22: per (queue, group) in a stats snapshot, the partitions the group has consumed
-- from (`members` of GET /api/v1/consumer-groups, docs/consumer-groups.md): its cursors that
-- have handed out or committed anything. A group has a cursor on every partition of its queue
-- from its first pop on, so the count of cursors (`cursors`) says nothing about its consumers.
ALTER TABLE queen.group_stats ADD COLUMN members bigint NOT NULL DEFAULT 0;
