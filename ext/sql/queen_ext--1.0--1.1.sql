\echo Use "CREATE EXTENSION queen_ext" to load this file. \quit

-- queen_ext 1.1: batched dedup probes of queen.log_dedup, and version().

CREATE FUNCTION queen_ext.dedup_probe(partition_id bigint, txids text[])
RETURNS TABLE(idx integer, msg_offset bigint, created_at timestamptz)
AS 'MODULE_PATHNAME', 'queen_ext_dedup_probe'
LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 10;

COMMENT ON FUNCTION queen_ext.dedup_probe(bigint, text[]) IS
'For each 1-based position idx of txids whose transaction id has a queen.log_dedup row in partition_id, that row''s msg_offset and created_at (NULL elements are skipped, repeated ids give one row per position). B-tree probes of the (partition_id, transaction_id) key. Raises 42P01 without the broker schema, 42501 without SELECT on queen.log_dedup.';

CREATE FUNCTION queen_ext.version()
RETURNS text
AS 'MODULE_PATHNAME', 'queen_ext_version'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION queen_ext.version() IS
'The library''s version, segment format version and zstd version, e.g. "queen_ext 1.1 (segment format 1, zstd 1.5.4)".';
