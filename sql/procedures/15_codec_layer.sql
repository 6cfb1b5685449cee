-- The codec layer: the only functions the procedures call to pack and decode segments and
-- to probe transaction ids. Each has one definition that asks the database whether the
-- queen_ext extension is installed: with it, the work is done by its C functions (zstd
-- segments, C decoding, index probes); without it, by plain SQL over raw segments. The mode
-- is a property of the database, not of a broker, so brokers never disagree.
-- The extension is referenced only inside PL/pgSQL branches that run when it is installed:
-- PL/pgSQL bodies are parsed at first execution and record no dependency, so these
-- functions are created without it and DROP EXTENSION queen_ext needs no CASCADE.

-- queen.codec_extension(): the installed version of queen_ext, NULL without it.
CREATE OR REPLACE FUNCTION queen.codec_extension()
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT e.extversion FROM pg_catalog.pg_extension e WHERE e.extname = 'queen_ext' $$;
COMMENT ON FUNCTION queen.codec_extension() IS
  'Version of the queen_ext extension installed in this database, or NULL (stock SQL codec path).';

-- queen.codec_path(): 'queen_ext' when the codec layer uses the extension, else 'sql'.
CREATE OR REPLACE FUNCTION queen.codec_path()
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN queen.codec_extension() IS NULL THEN 'sql' ELSE 'queen_ext' END $$;
COMMENT ON FUNCTION queen.codec_path() IS
  'The codec path of this database: queen_ext (extension installed) or sql (stock).';

-- zstd level of the segments the codec layer packs with the extension: level 1 compresses
-- ≈200-byte JSON messages nearly as well as level 3 at a fraction of the CPU
-- (docs/benchmarks.md); 'auto' keeps a segment raw when zstd would not make it smaller.
CREATE OR REPLACE FUNCTION queen.pack_segment(
    p_created_at timestamptz, p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[])
RETURNS bytea
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
    IF queen.codec_extension() IS NOT NULL THEN
        RETURN queen_ext.segment_pack(array_fill(p_created_at, ARRAY[cardinality(p_txids)]),
                                      p_txids, p_trace_ids, p_producers, p_payloads, 'auto', 1);
    END IF;
    RETURN queen.segment_pack_raw(p_created_at, p_txids, p_trace_ids, p_producers, p_payloads);
END
$$;
COMMENT ON FUNCTION queen.pack_segment(timestamptz, text[], uuid[], text[], text[]) IS
  'Packs frames into a segment with the best codec this database has: zstd with queen_ext (raw when zstd does not save bytes), raw on stock PostgreSQL.';

CREATE OR REPLACE FUNCTION queen.decode_segment(p_body bytea)
RETURNS TABLE(idx integer, created_at timestamptz, transaction_id text, trace_id uuid,
              producer_sub text, payload text)
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
    IF p_body IS NULL THEN
        RETURN;
    END IF;
    IF queen.codec_extension() IS NOT NULL THEN
        RETURN QUERY SELECT d.idx, d.created_at, d.transaction_id, d.trace_id, d.producer_sub, d.payload
                       FROM queen_ext.segment_decode(p_body) d;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM queen.segment_frames(p_body);
END
$$;
COMMENT ON FUNCTION queen.decode_segment(bytea) IS
  'Frames of a segment (raw and, with queen_ext, zstd); without queen_ext the columns of a zstd segment are NULL but for idx.';

-- queen.dedup_probe(partitions, txids): for each 1-based position i whose (partition,
-- transaction id) pair p_partition_ids[i], p_txids[i] has a row in queen.log_dedup, its
-- stored offset and createdAt (callers apply their dedup window); a NULL in either array
-- gives no row. One call serves a whole fused push. queen_ext 1.2 probes in C; older
-- versions and stock PostgreSQL join in SQL.
-- The single-partition form is not part of the layer (nothing calls it): drop it where present.
DROP FUNCTION IF EXISTS queen.dedup_probe(bigint, text[]);
CREATE OR REPLACE FUNCTION queen.dedup_probe(p_partition_ids bigint[], p_txids text[])
RETURNS TABLE(idx integer, msg_offset bigint, created_at timestamptz)
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
    IF to_regprocedure('queen_ext.dedup_probe(bigint[],text[])') IS NOT NULL THEN
        RETURN QUERY SELECT p.idx, p.msg_offset, p.created_at
                       FROM queen_ext.dedup_probe(p_partition_ids, p_txids) p;
        RETURN;
    END IF;
    RETURN QUERY SELECT u.i::integer, d.msg_offset, d.created_at
                   FROM unnest(p_partition_ids, p_txids) WITH ORDINALITY AS u(pid, txid, i)
                   JOIN queen.log_dedup d
                     ON d.partition_id = u.pid AND d.transaction_id = u.txid;
END
$$;
COMMENT ON FUNCTION queen.dedup_probe(bigint[], text[]) IS
  'Stored offset and createdAt of each (partition, transaction id) pair of a batch found in the dedup index (one call for a whole fused push).';

-- queen.payload_jsonb(payload text): a stored payload (JSON text) as jsonb for SQL readers.
-- jsonb cannot hold the escape \u0000, which JSON allows in strings: such escapes become
-- \ufffd here (the exact text stays available as the payload text itself). Text with more
-- openers than queen.max_payload_depth() may nest beyond what jsonb reads: it takes
-- queen.payload_jsonb_deep, NULL instead of an error (most payloads never get there).
CREATE OR REPLACE FUNCTION queen.payload_jsonb(p_payload text)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN octet_length(p_payload) > 2 * queen.max_payload_depth()
                     AND octet_length(p_payload) - octet_length(translate(p_payload, '[{', ''))
                         > queen.max_payload_depth()
                THEN queen.payload_jsonb_deep(p_payload)
                WHEN strpos(p_payload, '\u0000') > 0
                THEN regexp_replace(p_payload, '(?<!\\)((?:\\\\)*)\\u0000', '\1\\ufffd', 'g')::jsonb
                ELSE p_payload::jsonb
           END
$$;
COMMENT ON FUNCTION queen.payload_jsonb(text) IS
  'A stored JSON payload as jsonb (\u0000 escapes become \ufffd; NULL where it nests too deep for jsonb).';
