-- Migration 19: the highest offset a cursor has handed out (docs/metrics.md,
-- queen_messages_redelivered_total): a pop that hands out an offset at or below it delivers
-- that offset again. queen.pop sets it in the row version it writes anyway; a seek or a group
-- reset sets it back to 0, so replays asked for are not counted as redeliveries. Cursors that
-- exist at the upgrade start from 0: a lease live across the upgrade is not counted again.
ALTER TABLE queen.log_consumers ADD COLUMN delivered_to bigint NOT NULL DEFAULT 0;
