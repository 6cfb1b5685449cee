-- Migration 11: when a consumer group last popped a queue (updated at most every 10 s), so
-- that a group polling an empty queue is not taken for an abandoned one.
ALTER TABLE queen.consumer_groups ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now();
