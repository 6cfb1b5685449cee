CREATE SCHEMA IF NOT EXISTS queen;

-- Pure-SQL codec for segment format v1 (docs/segment-format.md), codec `raw` only.
--
-- Contract
--   * Writes and reads byte-for-byte what codec/queen_segment.c writes and reads: the
--     golden vectors of tests/unit/segment_golden_test.cpp are checked against
--     queen.segment_pack_raw in regress/sql/codec.sql.
--   * Needs no extension (plpgsql and sql only), works on stock PostgreSQL 15; every
--     statement is CREATE OR REPLACE, so the file may be applied any number of times.
--   * Text columns are UTF-8 in the segment: convert_to/convert_from translate from/to the
--     database encoding.
--   * created_at is stored as microseconds since 1970-01-01 00:00:00 UTC.
--   * idx is the 0-based position of a frame in its segment (offset = first_offset + idx).
--   * zstd segments (codec 1) are not decoded here: segment_frames returns frame_count rows
--     with idx set and every other column NULL; the extension decodes them.
--   * SQLSTATEs:
--       XX001 (data_corrupted)          a corrupt segment given to segment_header,
--                                       segment_codec, segment_frame_count, segment_frames;
--                                       the message starts with "segment:".
--       22023 (invalid_parameter_value) bad arguments to segment_pack_raw.
--     Besides: text that is not valid UTF-8 raises PostgreSQL's own 22021, a created_at
--     outside the timestamptz range raises 22008.

-- The frame limits of segment format v1, as codec/queen_segment.h defines them for C
-- (QSEG_MAX_TXID, QSEG_MAX_PRODUCER): one definition for SQL, held equal to the header by
-- scripts/check_operations.py. IMMUTABLE sql: the planner folds each call to its constant.
CREATE OR REPLACE FUNCTION queen.segment_max_txid_bytes() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT 255';
COMMENT ON FUNCTION queen.segment_max_txid_bytes() IS
  'The longest transaction id a segment frame holds, in bytes (QSEG_MAX_TXID).';
CREATE OR REPLACE FUNCTION queen.segment_max_producer_bytes() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT 1024';
COMMENT ON FUNCTION queen.segment_max_producer_bytes() IS
  'The longest producer identity a segment frame holds, in bytes (QSEG_MAX_PRODUCER).';

-- Header of a segment, checked: magic, version 1, codec 0 or 1, flags 0, frame_count >= 1,
-- for raw a body of exactly raw_length bytes, for zstd a non-empty body; and, for both, a
-- raw_length that can hold frame_count frames (each frame takes at least 22 bytes). Reads
-- only the first 16 bytes of the value (a sliced detoast).
CREATE OR REPLACE FUNCTION queen.segment_header(p_body bytea, OUT codec text,
                                                OUT frame_count int, OUT raw_length bigint)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $fn$
DECLARE
    v_len  int := octet_length(p_body);
    v_head bytea := substring(p_body from 1 for 16);
    v_codec int;
    v_count bigint;
BEGIN
    IF v_len < 16 THEN
        RAISE EXCEPTION 'segment: truncated header (% bytes, need 16)', v_len
            USING ERRCODE = 'XX001';
    END IF;
    IF substring(v_head from 1 for 4) <> decode('51534547', 'hex') THEN
        RAISE EXCEPTION 'segment: bad magic (%)', encode(substring(v_head from 1 for 4), 'hex')
            USING ERRCODE = 'XX001';
    END IF;
    IF get_byte(v_head, 4) <> 1 THEN
        RAISE EXCEPTION 'segment: unsupported version %', get_byte(v_head, 4)
            USING ERRCODE = 'XX001';
    END IF;
    v_codec := get_byte(v_head, 5);
    IF v_codec > 1 THEN
        RAISE EXCEPTION 'segment: unknown codec %', v_codec USING ERRCODE = 'XX001';
    END IF;
    IF get_byte(v_head, 6) <> 0 OR get_byte(v_head, 7) <> 0 THEN
        RAISE EXCEPTION 'segment: bad flags %', encode(substring(v_head from 7 for 2), 'hex')
            USING ERRCODE = 'XX001';
    END IF;
    v_count := (get_byte(v_head, 8)::bigint << 24) | (get_byte(v_head, 9) << 16)
             | (get_byte(v_head, 10) << 8) | get_byte(v_head, 11);
    raw_length := (get_byte(v_head, 12)::bigint << 24) | (get_byte(v_head, 13) << 16)
                | (get_byte(v_head, 14) << 8) | get_byte(v_head, 15);
    IF v_count = 0 THEN
        RAISE EXCEPTION 'segment: frame count mismatch (frame_count is 0)'
            USING ERRCODE = 'XX001';
    END IF;
    IF v_count * 22 > raw_length THEN
        RAISE EXCEPTION 'segment: frame count mismatch (% frames cannot fit in raw_length %)',
            v_count, raw_length USING ERRCODE = 'XX001';
    END IF;
    IF v_codec = 0 THEN
        IF v_len - 16 < raw_length THEN
            RAISE EXCEPTION 'segment: truncated (body is % bytes, raw_length is %)',
                v_len - 16, raw_length USING ERRCODE = 'XX001';
        ELSIF v_len - 16 > raw_length THEN
            RAISE EXCEPTION 'segment: raw length mismatch (body is % bytes, raw_length is %)',
                v_len - 16, raw_length USING ERRCODE = 'XX001';
        END IF;
        codec := 'raw';
    ELSE
        IF v_len = 16 THEN
            RAISE EXCEPTION 'segment: truncated (empty zstd body)' USING ERRCODE = 'XX001';
        END IF;
        codec := 'zstd';
    END IF;
    frame_count := v_count::int;  -- < 2^31: raw_length < 2^32 and frames take >= 22 bytes
END
$fn$;

COMMENT ON FUNCTION queen.segment_header(bytea) IS
'Checked header of a v1 segment: codec (''raw''/''zstd''), frame_count, raw_length. Raises XX001 (message "segment: ...") for a corrupt header. Reads only the first 16 bytes.';

CREATE OR REPLACE FUNCTION queen.segment_codec(p_body bytea) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $fn$ SELECT (queen.segment_header(p_body)).codec $fn$;

COMMENT ON FUNCTION queen.segment_codec(bytea) IS
'Codec of a v1 segment: ''raw'' or ''zstd''. The header is checked; a corrupt one raises XX001.';

CREATE OR REPLACE FUNCTION queen.segment_frame_count(p_body bytea) RETURNS int
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $fn$ SELECT (queen.segment_header(p_body)).frame_count $fn$;

COMMENT ON FUNCTION queen.segment_frame_count(bytea) IS
'Number of frames (messages) of a v1 segment, from its header, which is checked; a corrupt one raises XX001.';

-- One frame of a raw segment: length, created_at (p_ts: int8send of its microseconds),
-- transaction id, trace flag and id, producer (absent: length 0xffff), payload. Checks
-- nothing (segment_pack_raw and queen.push check their arguments first). A single SQL
-- expression, so the planner inlines it into the statement that packs many frames at once.
CREATE OR REPLACE FUNCTION queen.segment_frame(p_ts bytea, p_txid text, p_trace uuid,
                                               p_producer text, p_payload text)
RETURNS bytea
LANGUAGE sql STABLE PARALLEL SAFE
AS $fn$
    SELECT int4send(17 + octet_length(convert_to(p_txid, 'UTF8'))
                    + coalesce(octet_length(convert_to(p_producer, 'UTF8')), 0)
                    + octet_length(convert_to(p_payload, 'UTF8'))
                    + CASE WHEN p_trace IS NULL THEN 0 ELSE 16 END)
           || p_ts
           || int2send(least(octet_length(convert_to(p_txid, 'UTF8')), 32767)::int2) || convert_to(p_txid, 'UTF8')
           || CASE WHEN p_trace IS NULL THEN '\x00'::bytea ELSE '\x01'::bytea || uuid_send(p_trace) END
           || CASE WHEN p_producer IS NULL THEN '\xffff'::bytea
                   ELSE int2send(least(octet_length(convert_to(p_producer, 'UTF8')), 32767)::int2)
                        || convert_to(p_producer, 'UTF8') END
           || int4send(octet_length(convert_to(p_payload, 'UTF8'))) || convert_to(p_payload, 'UTF8')
$fn$;

COMMENT ON FUNCTION queen.segment_frame(bytea, text, uuid, text, text) IS
'One raw frame (bytes as the C encoder writes them) from its fields; p_ts is int8send of created_at in microseconds since 1970. Unchecked: callers check lengths first.';

-- A raw segment from its frame count and concatenated frames: the 16-byte header, then
-- the frames (magic "QSEG", version 1, codec raw, flags 0, count, raw length).
CREATE OR REPLACE FUNCTION queen.segment_raw(p_count int, p_frames bytea)
RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
    SELECT '\x5153454701000000'::bytea || int4send(p_count) || int4send(octet_length(p_frames)) || p_frames
$fn$;

COMMENT ON FUNCTION queen.segment_raw(int, bytea) IS
'A raw v1 segment: header for p_count frames, then the concatenated frames p_frames.';

-- Builds a raw segment in one set-based pass: unnest WITH ORDINALITY, one frame
-- (queen.segment_frame) per element, string_agg in ordinal order. Arguments are checked in the same pass and the
-- first bad element is reported after it.
CREATE OR REPLACE FUNCTION queen.segment_pack_raw(p_created_at timestamptz, p_txids text[],
                                                  p_trace_ids uuid[], p_producers text[],
                                                  p_payloads text[])
RETURNS bytea
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $fn$
DECLARE
    v_n        int := cardinality(p_txids);
    v_us       numeric;
    v_ts       bytea;
    v_count    int;
    v_frames   bytea;
    v_bad_txid bigint;
    v_bad_prod bigint;
    v_bad_pay  bigint;
BEGIN
    IF p_created_at IS NULL OR NOT isfinite(p_created_at) THEN
        RAISE EXCEPTION 'segment_pack_raw: created_at must be a finite timestamp'
            USING ERRCODE = '22023';
    END IF;
    IF v_n IS NULL OR v_n = 0 OR array_ndims(p_txids) <> 1 THEN
        RAISE EXCEPTION 'segment_pack_raw: txids must be a non-empty one-dimensional array'
            USING ERRCODE = '22023';
    END IF;
    IF p_payloads IS NULL OR cardinality(p_payloads) <> v_n OR array_ndims(p_payloads) <> 1
       OR (p_trace_ids IS NOT NULL
           AND (cardinality(p_trace_ids) <> v_n OR array_ndims(p_trace_ids) <> 1))
       OR (p_producers IS NOT NULL
           AND (cardinality(p_producers) <> v_n OR array_ndims(p_producers) <> 1)) THEN
        RAISE EXCEPTION 'segment_pack_raw: payloads, trace_ids and producers must have as many elements as txids (%)', v_n
            USING ERRCODE = '22023',
                  HINT = 'trace_ids and producers may be NULL (no trace id, no producer for every frame) or have NULL elements.';
    END IF;

    v_us := extract(epoch FROM p_created_at) * 1000000;  -- numeric: exact
    IF v_us > 9223372036854775807 THEN
        RAISE EXCEPTION 'segment_pack_raw: created_at % is beyond the 64-bit microsecond range',
            p_created_at USING ERRCODE = '22023';
    END IF;
    v_ts := int8send(v_us::bigint);

    SELECT count(*)::int,
           string_agg(queen.segment_frame(v_ts, u.txid, u.trace, u.producer, u.payload), ''::bytea ORDER BY u.ord),
           min(u.ord) FILTER (WHERE u.txid IS NULL
                                 OR octet_length(convert_to(u.txid, 'UTF8')) NOT BETWEEN 1 AND queen.segment_max_txid_bytes()),
           min(u.ord) FILTER (WHERE octet_length(convert_to(u.producer, 'UTF8')) > queen.segment_max_producer_bytes()),
           min(u.ord) FILTER (WHERE u.payload IS NULL)
      INTO v_count, v_frames, v_bad_txid, v_bad_prod, v_bad_pay
      FROM unnest(p_txids, p_trace_ids, p_producers, p_payloads)
           WITH ORDINALITY AS u(txid, trace, producer, payload, ord);

    IF v_bad_txid IS NOT NULL THEN
        RAISE EXCEPTION 'segment_pack_raw: transaction id % must be 1..% bytes', v_bad_txid, queen.segment_max_txid_bytes()
            USING ERRCODE = '22023';
    END IF;
    IF v_bad_prod IS NOT NULL THEN
        RAISE EXCEPTION 'segment_pack_raw: producer % is longer than % bytes', v_bad_prod,
            queen.segment_max_producer_bytes()
            USING ERRCODE = '22023';
    END IF;
    IF v_bad_pay IS NOT NULL THEN
        RAISE EXCEPTION 'segment_pack_raw: payload % is NULL', v_bad_pay
            USING ERRCODE = '22023';
    END IF;

    RETURN queen.segment_raw(v_count, v_frames);
END
$fn$;

COMMENT ON FUNCTION queen.segment_pack_raw(timestamptz, text[], uuid[], text[], text[]) IS
'Builds a raw v1 segment, byte-for-byte as the C encoder does. All frames share created_at; the arrays are parallel (element i is frame i). trace_ids and producers may be NULL or hold NULL elements (no trace id / no producer identity); an empty producer string is kept as empty. Raises 22023 for bad arguments: NULL or infinite created_at, empty or mismatched arrays, a txid NULL, empty or longer than queen.segment_max_txid_bytes(), a producer longer than queen.segment_max_producer_bytes(), a NULL payload.';

-- Walks a raw segment. The body is detoasted once into a local variable (p_body || ''),
-- then read with get_byte/substring at increasing positions, so the cost is linear in the
-- segment size.
CREATE OR REPLACE FUNCTION queen.segment_frames(p_body bytea)
RETURNS TABLE(idx int, created_at timestamptz, transaction_id text, trace_id uuid,
              producer_sub text, payload text)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $fn$
DECLARE
    v_codec text;
    v_count int;
    v_raw   bigint;
    b       bytea;
    v_end   int;
    v_pos   int := 16;  -- 0-based offset of the current frame
    p       int;        -- 0-based read position inside the frame
    v_fend  bigint;
    v_flen  bigint;
    v_us    bigint;
    v_tl    int;
    v_flag  int;
    v_pl    int;
    v_yl    bigint;
BEGIN
    SELECT h.codec, h.frame_count, h.raw_length INTO v_codec, v_count, v_raw
      FROM queen.segment_header(p_body) h;

    IF v_codec = 'zstd' THEN
        RETURN QUERY SELECT g.i, NULL::timestamptz, NULL::text, NULL::uuid, NULL::text,
                            NULL::text
                       FROM generate_series(0, v_count - 1) AS g(i);
        RETURN;
    END IF;

    b := p_body || ''::bytea;  -- one detoast/decompression, not one per get_byte
    v_end := octet_length(b);

    FOR i IN 0 .. v_count - 1 LOOP
        IF v_pos = v_end THEN
            RAISE EXCEPTION 'segment: frame count mismatch (frame_count is %, the frames end after %)',
                v_count, i USING ERRCODE = 'XX001';
        END IF;
        IF v_end - v_pos < 4 THEN
            RAISE EXCEPTION 'segment: truncated (frame % at byte %)', i, v_pos
                USING ERRCODE = 'XX001';
        END IF;
        v_flen := (get_byte(b, v_pos)::bigint << 24) | (get_byte(b, v_pos + 1) << 16)
                | (get_byte(b, v_pos + 2) << 8) | get_byte(b, v_pos + 3);
        IF v_flen > v_end - v_pos - 4 THEN
            RAISE EXCEPTION 'segment: truncated (frame % at byte % has frame_length %, % bytes remain)',
                i, v_pos, v_flen, v_end - v_pos - 4 USING ERRCODE = 'XX001';
        END IF;
        p := v_pos + 4;
        v_fend := p + v_flen;
        IF v_flen < 10 THEN
            RAISE EXCEPTION 'segment: corrupt frame % (frame_length % is too short)', i, v_flen
                USING ERRCODE = 'XX001';
        END IF;

        v_us := (get_byte(b, p)::bigint << 56) | (get_byte(b, p + 1)::bigint << 48)
              | (get_byte(b, p + 2)::bigint << 40) | (get_byte(b, p + 3)::bigint << 32)
              | (get_byte(b, p + 4)::bigint << 24) | (get_byte(b, p + 5) << 16)
              | (get_byte(b, p + 6) << 8) | get_byte(b, p + 7);
        v_tl := (get_byte(b, p + 8) << 8) | get_byte(b, p + 9);
        p := p + 10;
        IF v_tl < 1 OR v_tl > queen.segment_max_txid_bytes() THEN
            RAISE EXCEPTION 'segment: corrupt frame % (txid_length % is not 1..%)', i, v_tl, queen.segment_max_txid_bytes()
                USING ERRCODE = 'XX001';
        END IF;
        IF v_fend - p < v_tl + 1 THEN
            RAISE EXCEPTION 'segment: corrupt frame % (transaction id overruns frame_length)', i
                USING ERRCODE = 'XX001';
        END IF;
        transaction_id := convert_from(substring(b from p + 1 for v_tl), 'UTF8');
        p := p + v_tl;

        v_flag := get_byte(b, p);
        p := p + 1;
        IF v_flag = 0 THEN
            trace_id := NULL;
        ELSIF v_flag = 1 THEN
            IF v_fend - p < 16 THEN
                RAISE EXCEPTION 'segment: corrupt frame % (trace id overruns frame_length)', i
                    USING ERRCODE = 'XX001';
            END IF;
            trace_id := encode(substring(b from p + 1 for 16), 'hex')::uuid;
            p := p + 16;
        ELSE
            RAISE EXCEPTION 'segment: corrupt frame % (trace_flag is %)', i, v_flag
                USING ERRCODE = 'XX001';
        END IF;

        IF v_fend - p < 2 THEN
            RAISE EXCEPTION 'segment: corrupt frame % (producer_length overruns frame_length)', i
                USING ERRCODE = 'XX001';
        END IF;
        v_pl := (get_byte(b, p) << 8) | get_byte(b, p + 1);
        p := p + 2;
        IF v_pl = 65535 THEN
            producer_sub := NULL;
        ELSIF v_pl > queen.segment_max_producer_bytes() THEN
            RAISE EXCEPTION 'segment: corrupt frame % (producer_length % is over %)', i, v_pl,
                queen.segment_max_producer_bytes()
                USING ERRCODE = 'XX001';
        ELSIF v_fend - p < v_pl THEN
            RAISE EXCEPTION 'segment: corrupt frame % (producer overruns frame_length)', i
                USING ERRCODE = 'XX001';
        ELSE
            producer_sub := convert_from(substring(b from p + 1 for v_pl), 'UTF8');
            p := p + v_pl;
        END IF;

        IF v_fend - p < 4 THEN
            RAISE EXCEPTION 'segment: corrupt frame % (payload_length overruns frame_length)', i
                USING ERRCODE = 'XX001';
        END IF;
        v_yl := (get_byte(b, p)::bigint << 24) | (get_byte(b, p + 1) << 16)
              | (get_byte(b, p + 2) << 8) | get_byte(b, p + 3);
        p := p + 4;
        IF v_fend - p <> v_yl THEN
            RAISE EXCEPTION 'segment: corrupt frame % (payload_length % but % bytes left in the frame)',
                i, v_yl, v_fend - p USING ERRCODE = 'XX001';
        END IF;
        payload := convert_from(substring(b from p + 1 for v_yl::int), 'UTF8');

        idx := i;
        -- Exact for every int64: each product of the bigint and the interval stays below
        -- 2^53 significant bits (interval multiplication goes through float8).
        created_at := timestamptz 'epoch'
                      + (v_us / 1000000000000) * interval '1000000 seconds'
                      + (v_us % 1000000000000) * interval '1 microsecond';
        RETURN NEXT;
        v_pos := v_fend;
    END LOOP;

    IF v_pos <> v_end THEN
        RAISE EXCEPTION 'segment: frame count mismatch (% bytes after frame_count % frames)',
            v_end - v_pos, v_count USING ERRCODE = 'XX001';
    END IF;
END
$fn$;

COMMENT ON FUNCTION queen.segment_frames(bytea) IS
'The frames of a v1 segment, one row each, idx 0-based (offset = first_offset + idx). For a raw segment every frame is decoded and checked; for a zstd segment the rows have only idx (the other columns are NULL; the queen_ext extension decodes zstd). A corrupt segment raises XX001 (message "segment: ..."); text that is not valid UTF-8 raises 22021.';
