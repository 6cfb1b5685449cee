-- The codec layer: the only functions the procedures call to pack and decode segments.
-- On stock PostgreSQL they are plain SQL over raw segments; the queen_ext extension
-- redefines nothing here but is detected by these functions, so the mode is a property of
-- the database, not of a broker.

CREATE OR REPLACE FUNCTION queen.pack_segment(
    p_created_at timestamptz, p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[])
RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT queen.segment_pack_raw(p_created_at, p_txids, p_trace_ids, p_producers, p_payloads) $$;
COMMENT ON FUNCTION queen.pack_segment(timestamptz, text[], uuid[], text[], text[]) IS
  'Packs frames into a segment with the best codec this database has (raw on stock PostgreSQL).';

CREATE OR REPLACE FUNCTION queen.decode_segment(p_body bytea)
RETURNS TABLE(idx integer, created_at timestamptz, transaction_id text, trace_id uuid,
              producer_sub text, payload text)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT * FROM queen.segment_frames(p_body) $$;
COMMENT ON FUNCTION queen.decode_segment(bytea) IS
  'Frames of a segment; payload columns are NULL for a codec this database cannot decode.';

-- queen.payload_jsonb(payload text): a stored payload (JSON text) as jsonb for SQL readers.
-- jsonb cannot hold the escape \u0000, which JSON allows in strings: such escapes become
-- \ufffd here (the exact text stays available as the payload text itself).
CREATE OR REPLACE FUNCTION queen.payload_jsonb(p_payload text)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN strpos(p_payload, '\u0000') > 0
                THEN regexp_replace(p_payload, '(?<!\\)((?:\\\\)*)\\u0000', '\1\\ufffd', 'g')::jsonb
                ELSE p_payload::jsonb
           END
$$;
COMMENT ON FUNCTION queen.payload_jsonb(text) IS
  'A stored JSON payload as jsonb (\u0000 escapes, which jsonb cannot hold, become \ufffd).';
