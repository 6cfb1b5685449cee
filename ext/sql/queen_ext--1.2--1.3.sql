\echo Use "CREATE EXTENSION queen_ext" to load this file. \quit

-- 1.3: the hot operations in C: queen_ext.push, queen_ext.ack_completed, queen_ext.ack_fused

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

-- queen.ack_completed in C: queen.ack_completed (sql/procedures/61_ack_completed.sql) calls it
-- when it is installed.

CREATE FUNCTION queen_ext.ack_completed(consumer_group text, partition_ids bigint[], txids text[],
                                        offsets bigint[], lease_ids uuid[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
AS 'MODULE_PATHNAME', 'queen_ext_ack_completed'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 100;

COMMENT ON FUNCTION queen_ext.ack_completed(text, bigint[], text[], bigint[], uuid[]) IS
'queen.ack_completed in C, under its contract: a call of completions moves each of the group''s cursors to the highest acked offset of its live span (acks by transaction id resolved by direct dedup probes) and returns one row per ack. Locks, errors and rows as queen.ack_completed.';

-- queen.ack_fused in C: queen.ack_fused (sql/procedures/63_ack_fused.sql) calls it when it is
-- installed.

CREATE FUNCTION queen_ext.ack_fused(consumer_group text, requests integer[], partition_ids bigint[],
                                    txids text[], offsets bigint[], lease_ids uuid[],
                                    statuses text[], errors text[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
AS 'MODULE_PATHNAME', 'queen_ext_ack_fused'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 100;

COMMENT ON FUNCTION queen_ext.ack_fused(text, integer[], bigint[], text[], bigint[], uuid[], text[], text[]) IS
'queen.ack_fused in C, under its contract: applies the acks of several requests of a group together (one queen.ack call); a request whose cursors are busy or shared with an earlier request gets no row.';
