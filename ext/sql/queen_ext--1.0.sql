\echo Use "CREATE EXTENSION queen_ext" to load this file. \quit

-- queen_ext 1.0: the segment codec (docs/segment-format.md) in C, raw and zstd.
-- Every function lives in schema queen_ext (docs/extension.md), created here so that it is
-- a member of the extension and DROP EXTENSION queen_ext removes it.

CREATE SCHEMA queen_ext;
COMMENT ON SCHEMA queen_ext IS 'Functions of the queen_ext extension (docs/extension.md).';
-- The functions are safe for every role (dedup_probe checks SELECT on queen.log_dedup).
GRANT USAGE ON SCHEMA queen_ext TO PUBLIC;

CREATE FUNCTION queen_ext.segment_pack(created_ats timestamptz[], txids text[],
                                       trace_ids uuid[], producers text[], payloads text[],
                                       codec text DEFAULT 'zstd', level integer DEFAULT 3)
RETURNS bytea
AS 'MODULE_PATHNAME', 'queen_ext_segment_pack'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION queen_ext.segment_pack(timestamptz[], text[], uuid[], text[], text[], text, integer) IS
'Builds a v1 segment, one frame per txid in array order, with codec ''raw'' (byte-identical to queen.segment_pack_raw), ''zstd'' (at level 1..19) or ''auto'' (zstd unless it is not smaller). Arguments as queen.segment_pack_raw, with one created_at per frame. Raises 22023 for bad arguments, 54000 for a segment over 1 GB.';

CREATE FUNCTION queen_ext.segment_decode(body bytea, base_offset bigint DEFAULT 0,
                                         from_offset bigint DEFAULT NULL,
                                         to_offset bigint DEFAULT NULL)
RETURNS TABLE(idx integer, msg_offset bigint, created_at timestamptz, transaction_id text,
              trace_id uuid, producer_sub text, payload text)
AS 'MODULE_PATHNAME', 'queen_ext_segment_decode'
LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 100;

COMMENT ON FUNCTION queen_ext.segment_decode(bytea, bigint, bigint, bigint) IS
'The frames of a raw or zstd v1 segment, idx 0-based, msg_offset = base_offset + idx, only those with from_offset <= msg_offset <= to_offset (NULL bounds are open); the whole segment is checked. A NULL body gives no rows. A corrupt segment raises XX001 (message "segment: ..."), invalid UTF-8 22021.';

CREATE FUNCTION queen_ext.segment_header(body bytea, OUT codec text, OUT frame_count integer,
                                         OUT raw_length bigint, OUT stored_length integer)
AS 'MODULE_PATHNAME', 'queen_ext_segment_header'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION queen_ext.segment_header(bytea) IS
'Checked header of a v1 segment: codec (''raw''/''zstd''), frame_count, raw_length, and stored_length (the segment''s size in bytes). Raises XX001 like queen.segment_header. Reads only the first 16 bytes.';
