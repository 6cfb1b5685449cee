-- Migration 16: when a cursor last moved (docs/consumer-groups.md: lastConsumedAt). Set by the
-- cursor trigger of 52_cursor_ready.sql on every change of committed, in the same row version
-- that change writes anyway; NULL until the first.
ALTER TABLE queen.log_consumers ADD COLUMN committed_at timestamptz;
