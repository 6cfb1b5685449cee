-- Migration 29: the logical shards a shard database fences while `queen shards move` copies
-- them to another database (sql/procedures/88_shard_moves.sql): their rows refuse writes.
ALTER TABLE queen.shard_identity ADD COLUMN fenced integer[] NOT NULL DEFAULT '{}';
