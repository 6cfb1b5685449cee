-- Migration 21: where housekeeping's walks over the partitions resume (queen.partition_walk,
-- sql/procedures/85_housekeeping.sql): the cursor repair's (queen.repair_cursors) and the idle
-- partitions' reclaim (queen.reclaim_idle_partitions). Each round checks the next batch of
-- partition ids after its position, so a round costs its batch, not every partition of the
-- database. Sequences: moving one writes no row version and waits for no lock, and a move lost
-- in a crash only makes a round check some partitions again.
CREATE SEQUENCE queen.cursor_repair_position MINVALUE 0 START 0;
CREATE SEQUENCE queen.partition_reclaim_position MINVALUE 0 START 0;
