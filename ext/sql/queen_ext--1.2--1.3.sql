\echo Use "CREATE EXTENSION queen_ext" to load this file. \quit

-- 1.3: queen_ext.push, the fused push in C

-- The fused push in C: queen.push's contract (sql/procedures/40_push.sql), which calls it
-- when it is installed.

CREATE FUNCTION queen_ext.push(queues text[], partitions text[], counts integer[],
                               txids text[], trace_ids uuid[], producers text[], payloads text[])
RETURNS TABLE(item integer, status text, partition_id bigint, msg_offset bigint,
              created_at timestamptz)
AS 'MODULE_PATHNAME', 'queen_ext_push'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 100;

COMMENT ON FUNCTION queen_ext.push(text[], text[], integer[], text[], uuid[], text[], text[]) IS
'The fused push of queen.push in C, under its contract: stores the items (counts[k] items for (queues[k], partitions[k])) with exact dedup, one zstd or raw segment per partition, and returns one row per item: queued with its offset and createdAt, or duplicate with the original''s offset. Locks, errors and rows as queen.push.';
