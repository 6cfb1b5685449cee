\echo Use "CREATE EXTENSION queen_ext" to load this file. \quit

-- queen_ext 1.2: dedup probes of many partitions in one call (a fused push touches many).

CREATE FUNCTION queen_ext.dedup_probe(partition_ids bigint[], txids text[])
RETURNS TABLE(idx integer, msg_offset bigint, created_at timestamptz)
AS 'MODULE_PATHNAME', 'queen_ext_dedup_probe_keys'
LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 10;

COMMENT ON FUNCTION queen_ext.dedup_probe(bigint[], text[]) IS
'For each 1-based position idx whose (partition_ids[idx], txids[idx]) has a queen.log_dedup row, that row''s msg_offset and created_at (a NULL in either array gives no row). One call probes a whole fused push. B-tree probes of the (partition_id, transaction_id) key. Raises 22023 when the arrays differ in length, 42P01 without the broker schema, 42501 without SELECT on queen.log_dedup.';
