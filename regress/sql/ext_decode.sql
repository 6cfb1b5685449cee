-- queen_ext.segment_decode and queen_ext.segment_header (ext/segment_decode.c,
-- ext/segment_header.c): the golden vectors of regress/sql/codec.sql, agreement with the
-- SQL codec, offset ranges, NULLs, and every kind of corrupt segment with its SQLSTATE.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET client_min_messages = warning;
\set VERBOSITY terse
\set SHOW_CONTEXT never
SELECT NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'queen_ext') AS ext_was_absent \gset
CREATE EXTENSION IF NOT EXISTS queen_ext;

-- SQLSTATE and message of a statement, or 'ok'.
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$f$;
-- A zstd frame holding `area` as one raw (stored) block, with or without the content size
-- (area below 256 bytes): lets SQL build zstd segments around any frame area.
CREATE FUNCTION pg_temp.zstd_stored(area bytea, with_size boolean) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $f$
  SELECT CASE WHEN with_size THEN '\x28b52ffd20'::bytea || set_byte('\x00'::bytea, 0, octet_length(area))
              ELSE '\x28b52ffd0000'::bytea END
         || set_byte(set_byte(set_byte('\x000000'::bytea, 0, ((octet_length(area) << 3) | 1) & 255),
                              1, ((octet_length(area) << 3) >> 8) & 255),
                     2, (octet_length(area) << 3) >> 16)
         || area
$f$;
-- A zstd segment: header with frame_count and raw_length, then zstd_stored(area).
CREATE FUNCTION pg_temp.zseg(frame_count int, raw_length int, area bytea,
                             with_size boolean DEFAULT true) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $f$
  SELECT '\x5153454701010000'::bytea || int4send(frame_count) || int4send(raw_length)
         || pg_temp.zstd_stored(area, with_size)
$f$;

CREATE TEMP TABLE golden (name text PRIMARY KEY, body bytea);
INSERT INTO golden VALUES
  ('three', decode('515345470100000000000003000000730000003100060a24181e4000000474782d310100112233445566778899aabbccddeeff0005616c696365000000077b2261223a317d0000001700060a24181e4000000474782d3200ffff000000025b5d0000001f00060a24181e4000000474782d330000000000000a7b226b223a22c3a9227d', 'hex')),
  ('one', decode('5153454701000000000000010000001600000012ffffffffffffffff00017400ffff00000000', 'hex')),
  ('zstd', decode('5153454701010000000000030000007328b52ffd20730d030044050000003100060a24181e4000000474782d310100112233445566778899aabbccddeeff0005616c696365000000077b2261223a317d000000173200ffff000000025b5d0000001f33000a7b226b223a22c3a9227d03003801f379a8c4878202', 'hex'));
-- The frame area of 'three' (115 bytes), for hand-made zstd segments.
CREATE TEMP TABLE area AS SELECT substring(body from 17) AS a FROM golden WHERE name = 'three';

-- 1. The golden vectors.
SELECT d.* FROM golden g, queen_ext.segment_decode(g.body) d WHERE g.name = 'three' ORDER BY d.idx;
SELECT d.*, d.producer_sub IS NULL AS producer_is_null, d.payload = '' AS payload_is_empty
  FROM golden g, queen_ext.segment_decode(g.body) d WHERE g.name = 'one';
SELECT d.* FROM golden g, queen_ext.segment_decode(g.body, 100) d WHERE g.name = 'zstd' ORDER BY d.idx;
-- The zstd golden decodes to exactly the frames of the raw golden, as the SQL codec reads them.
SELECT (SELECT array_agg(d ORDER BY d.idx)
          FROM (SELECT idx, created_at, transaction_id, trace_id, producer_sub, payload
                  FROM golden g, queen_ext.segment_decode(g.body) WHERE g.name = 'zstd') d)
     = (SELECT array_agg(f ORDER BY f.idx)
          FROM golden g, queen.segment_frames(g.body) f WHERE g.name = 'three') AS zstd_equals_sql_raw;
-- Raw segments: the extension and queen.segment_frames agree on every column.
SELECT g.name,
       (SELECT array_agg(d ORDER BY d.idx)
          FROM (SELECT idx, created_at, transaction_id, trace_id, producer_sub, payload
                  FROM queen_ext.segment_decode(g.body)) d)
     = (SELECT array_agg(f ORDER BY f.idx) FROM queen.segment_frames(g.body) f) AS same_as_sql
  FROM golden g WHERE g.name <> 'zstd' ORDER BY g.name;
-- The empty producer of frame 2 is '' and not NULL; frame 1 has none at all.
SELECT d.idx, d.producer_sub IS NULL AS producer_is_null, d.trace_id IS NULL AS trace_is_null,
       octet_length(d.payload) AS payload_bytes, length(d.payload) AS payload_chars
  FROM golden g, queen_ext.segment_decode(g.body) d WHERE g.name = 'zstd' ORDER BY d.idx;
-- A hand-made zstd frame (stored block) decodes too, with and without a content size.
SELECT s.with_size, count(*) AS frames, min(d.msg_offset), max(d.msg_offset)
  FROM area, (VALUES (true), (false)) s(with_size),
       queen_ext.segment_decode(pg_temp.zseg(3, 115, area.a, s.with_size), 7) d
 GROUP BY s.with_size ORDER BY s.with_size;

-- 2. segment_header: as queen.segment_header, plus stored_length (the value's size).
SELECT g.name, h.*, octet_length(g.body) AS octets,
       (h.codec, h.frame_count, h.raw_length) = (s.codec, s.frame_count, s.raw_length) AS same_as_sql
  FROM golden g, queen_ext.segment_header(g.body) h, queen.segment_header(g.body) s
 ORDER BY g.name;
SELECT queen_ext.segment_header(NULL) IS NULL AS header_of_null;
-- Stored out of line (EXTERNAL) and compressed (MAIN), the header is read from a slice.
CREATE TEMP TABLE stored (name text, body bytea);
ALTER TABLE stored ALTER COLUMN body SET STORAGE EXTERNAL;
INSERT INTO stored
  SELECT 'external', queen_ext.segment_pack(array_fill('2024-01-01 00:00:00+00'::timestamptz, ARRAY[2000]),
                                            array_agg('tx-' || i), NULL, NULL,
                                            array_agg(repeat('{"n":' || i || '}', 10)), 'raw')
    FROM generate_series(1, 2000) i;
ALTER TABLE stored ALTER COLUMN body SET STORAGE MAIN;
INSERT INTO stored SELECT 'main', body FROM stored;
SELECT s.name, pg_column_size(s.body) < octet_length(s.body) AS compressed, h.*,
       h.stored_length = octet_length(s.body) AS stored_is_octets,
       (SELECT count(*) FROM queen_ext.segment_decode(s.body)) AS frames
  FROM stored s, queen_ext.segment_header(s.body) h ORDER BY s.name;

-- 3. Offsets: msg_offset = base_offset + idx; from/to inclusive, NULL = unbounded.
SELECT r.base, r.lo, r.hi,
       (SELECT string_agg(d.idx || ':' || d.msg_offset || ':' || d.transaction_id, ' ' ORDER BY d.idx)
          FROM queen_ext.segment_decode(g.body, r.base, r.lo, r.hi) d) AS rows
  FROM golden g,
       (VALUES (0::bigint, NULL::bigint, NULL::bigint), (10, NULL, NULL), (10, 11, NULL),
               (10, NULL, 11), (10, 11, 11), (10, 12, 100), (10, 13, NULL), (10, NULL, 9),
               (10, 12, 11), (10, -5, 10), (-1, -1, 0), (-2, NULL, NULL),
               (9223372036854775805, NULL, NULL), (9223372036854775806, 0, 9223372036854775807))
         AS r(base, lo, hi)
 WHERE g.name = 'zstd';
-- Defaults: base_offset 0, no bounds.
SELECT string_agg(msg_offset::text, ',' ORDER BY idx) FROM golden g, queen_ext.segment_decode(g.body) WHERE g.name = 'three';
-- An offset past the bigint range is an error only when it would be returned.
SELECT pg_temp.err($$SELECT count(*) FROM golden g,
                          queen_ext.segment_decode(g.body, 9223372036854775807) WHERE g.name = 'three'$$);

-- 4. NULLs: a NULL body gives no rows; a NULL base_offset is an error.
SELECT count(*) AS rows_of_null FROM queen_ext.segment_decode(NULL);
SELECT count(*) AS rows_of_null FROM queen_ext.segment_decode(NULL, NULL, 1, 2);
SELECT count(*) FROM golden g, queen_ext.segment_decode(g.body, NULL) WHERE g.name = 'three';
\echo :LAST_ERROR_SQLSTATE

-- 5. Corrupt segments: XX001, message "segment: ...". For raw segments the SQL codec's
-- error is shown next to the extension's.
CREATE TEMP TABLE corrupt (n int PRIMARY KEY, what text, body bytea);
INSERT INTO corrupt
  SELECT c.n, c.what, c.seg
    FROM golden t, golden z, area,
         LATERAL (VALUES
      (1, 'empty value', '\x'::bytea),
      (2, 'truncated header', decode('5153454701000000', 'hex')),
      (3, '15-byte header', substring(t.body from 1 for 15)),
      (4, 'bad magic', set_byte(t.body, 0, 120)),
      (5, 'version 2', set_byte(t.body, 4, 2)),
      (6, 'version 0', set_byte(t.body, 4, 0)),
      (7, 'unknown codec 2', set_byte(t.body, 5, 2)),
      (8, 'unknown codec 7', set_byte(z.body, 5, 7)),
      (9, 'bad flags', set_byte(t.body, 7, 1)),
      (10, 'bad flags, high byte', set_byte(z.body, 6, 128)),
      (11, 'frame_count 0', set_byte(t.body, 11, 0)),
      (12, 'frame_count 2^32-1, cannot fit', overlay(t.body placing '\xffffffff'::bytea from 9 for 4)),
      (13, 'frame_count 6, cannot fit', set_byte(t.body, 11, 6)),
      (14, 'frame_count 4, frames end after 3', set_byte(t.body, 11, 4)),
      (15, 'frame_count 2, a frame after the count', set_byte(t.body, 11, 2)),
      (16, 'body shorter than raw_length', substring(t.body from 1 for 130)),
      (17, 'trailing byte after raw_length', t.body || '\x00'::bytea),
      (18, 'trailing byte inside raw_length', set_byte(t.body, 15, 116) || '\x00'::bytea),
      (19, 'trailing 3 bytes inside raw_length', set_byte(t.body, 15, 118) || '\x000000'::bytea),
      (20, 'frame_length one short', set_byte(t.body, 19, 48)),
      (21, 'frame_length one long', set_byte(t.body, 19, 50)),
      (22, 'frame_length past the end', set_byte(t.body, 18, 1)),
      (23, 'frame_length 9', set_byte(t.body, 19, 9)),
      (24, 'txid_length 0', set_byte(t.body, 82, 0)),
      (25, 'txid_length 256', set_byte(set_byte(t.body, 81, 1), 82, 0)),
      (26, 'txid overruns', set_byte(t.body, 82, 200)),
      (27, 'trace flag 2', set_byte(t.body, 87, 2)),
      (28, 'producer_length 1025', set_byte(set_byte(t.body, 115, 4), 116, 1)),
      (29, 'producer overruns', set_byte(t.body, 116, 100)),
      (30, 'payload_length one long', set_byte(t.body, 120, 11)),
      (31, 'empty zstd body', substring(z.body from 1 for 16)),
      (32, 'garbage zstd body', substring(z.body from 1 for 16) || convert_to('this is not a zstd frame', 'UTF8')),
      (33, 'zstd magic damaged', set_byte(z.body, 16, 41)),
      (34, 'zstd frame cut short', substring(z.body from 1 for octet_length(z.body) - 1)),
      (35, 'bytes after the zstd frame', z.body || '\x00'::bytea),
      (36, 'two zstd frames', z.body || substring(z.body from 17)),
      (37, 'last zstd byte damaged', set_byte(z.body, octet_length(z.body) - 1, 0)),
      (38, 'zstd content size 115, raw_length 116', set_byte(z.body, 15, 116)),
      (39, 'zstd content size 115, raw_length 114', set_byte(z.body, 15, 114)),
      (40, 'zstd raw_length 2^32-1', overlay(z.body placing '\xffffffff'::bytea from 13 for 4)),
      (41, 'zstd without content size, raw_length 116', pg_temp.zseg(3, 116, area.a, false)),
      (42, 'zstd without content size, raw_length 114', pg_temp.zseg(3, 114, area.a, false)),
      (43, 'zstd, frames end after 3', pg_temp.zseg(4, 115, area.a)),
      (44, 'zstd, a frame after the count', pg_temp.zseg(2, 115, area.a)),
      (45, 'zstd, trailing bytes in the area', pg_temp.zseg(3, 117, area.a || '\x0000'::bytea)),
      (46, 'zstd, area cut short', pg_temp.zseg(3, 114, substring(area.a from 1 for 114))),
      (47, 'zstd, trace flag 2 in frame 1', pg_temp.zseg(3, 115, set_byte(area.a, 87 - 16, 2))),
      (48, 'zstd without content size, raw_length past its blocks', pg_temp.zseg(3, 2000, area.a, false))
    ) AS c(n, what, seg)
   WHERE t.name = 'three' AND z.name = 'zstd';
SELECT n, what, pg_temp.err(format('SELECT count(*) FROM queen_ext.segment_decode(%L::bytea)', body)) AS segment_decode
  FROM corrupt ORDER BY n;
-- segment_header checks the header only, with the same errors as queen.segment_header.
SELECT n, what, pg_temp.err(format('SELECT queen_ext.segment_header(%L::bytea)', body)) AS segment_header,
       pg_temp.err(format('SELECT queen_ext.segment_header(%L::bytea)', body))
       = pg_temp.err(format('SELECT queen.segment_header(%L::bytea)', body)) AS same_as_sql
  FROM corrupt ORDER BY n;
-- Where the SQL codec reads the segment (all but the zstd bodies), it raises exactly the
-- extension's error: no rows here.
SELECT n, what, pg_temp.err(format('SELECT count(*) FROM queen.segment_frames(%L::bytea)', body)) AS sql_codec
  FROM corrupt
 WHERE n <= 31
   AND pg_temp.err(format('SELECT count(*) FROM queen.segment_frames(%L::bytea)', body))
       <> pg_temp.err(format('SELECT count(*) FROM queen_ext.segment_decode(%L::bytea)', body))
 ORDER BY n;
-- A range never hides a corrupt segment: every frame is walked, trailing bytes rejected.
SELECT c.n, r.lo, r.hi,
       pg_temp.err(format('SELECT count(*) FROM queen_ext.segment_decode(%L::bytea, 0, %s, %s)',
                          c.body, r.lo, r.hi)) AS segment_decode
  FROM corrupt c, (VALUES ('0', '0'), ('NULL', '0'), ('2', 'NULL'), ('5', '9')) r(lo, hi)
 WHERE c.n IN (15, 18, 28, 44) ORDER BY c.n, r.lo, r.hi;
-- Direct, as the broker sees it: SQLSTATE XX001.
SELECT * FROM queen_ext.segment_decode('\x0102'::bytea);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM corrupt c, queen_ext.segment_decode(c.body) WHERE c.n = 36;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM corrupt c, queen_ext.segment_header(c.body) WHERE c.n = 13;
\echo :LAST_ERROR_SQLSTATE

-- A zstd body of RLE blocks decompresses to as much as its header says (the codec checks
-- that the blocks can produce raw_length bytes): above 1 GB it cannot be held in memory,
-- 54000 before anything is allocated; below, zeros are a corrupt frame.
CREATE FUNCTION pg_temp.le(v bigint, n int) RETURNS bytea LANGUAGE sql IMMUTABLE AS $f$
  SELECT string_agg(set_byte('\x00'::bytea, 0, ((v >> (8 * i)) & 255)::int), ''::bytea ORDER BY i)
    FROM generate_series(0, n - 1) i
$f$;
CREATE FUNCTION pg_temp.zstd_rle(total bigint) RETURNS bytea LANGUAGE sql IMMUTABLE AS $f$
  SELECT '\x28b52ffda0'::bytea || pg_temp.le(total, 4)
         || string_agg(pg_temp.le((least(131072, total - b * 131072) << 3) | 2
                                  | CASE WHEN (b + 1) * 131072 >= total THEN 1 ELSE 0 END, 3)
                       || '\x00'::bytea, ''::bytea ORDER BY b)
    FROM generate_series(0, (total - 1) / 131072) b
$f$;
SELECT count(*) FROM queen_ext.segment_decode('\x5153454701010000'::bytea || int4send(1)
                                              || int4send(1200000000) || pg_temp.zstd_rle(1200000000));
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM queen_ext.segment_decode('\x5153454701010000'::bytea || int4send(1)
                                              || int4send(1000) || pg_temp.zstd_rle(1000));
\echo :LAST_ERROR_SQLSTATE

-- 6. Text that is not UTF-8 raises PostgreSQL's own 22021 (as convert_from does), in raw
-- and zstd segments; a created_at outside the timestamptz range raises 22008.
SELECT t.what,
       pg_temp.err(format('SELECT count(*) FROM queen_ext.segment_decode(%L::bytea)', t.body)) AS segment_decode,
       pg_temp.err(format('SELECT count(*) FROM queen_ext.segment_decode(%L::bytea)', t.body))
       = pg_temp.err(format('SELECT count(*) FROM queen.segment_frames(%L::bytea)', t.body)) AS same_as_sql
  FROM golden g, LATERAL (VALUES
      ('0xff in the payload', set_byte(g.body, 64, 255)),
      ('0x00 in the payload', set_byte(g.body, 64, 0)),
      ('0xc3 0x28 in a txid', set_byte(set_byte(g.body, 30, 195), 31, 40)),
      ('0xff in the producer', set_byte(g.body, 53, 255)),
      ('created_at -2^63', overlay(g.body placing '\x8000000000000000'::bytea from 21 for 8)),
      ('created_at before 4714 BC', overlay(g.body placing int8send(-210866803200000001) from 21 for 8)),
      ('created_at 2^63-1 (year 294247)', overlay(g.body placing '\x7fffffffffffffff'::bytea from 21 for 8))
    ) AS t(what, body)
 WHERE g.name = 'three';
SELECT count(*) FROM area, queen_ext.segment_decode(pg_temp.zseg(3, 115, set_byte(area.a, 64 - 16, 255))) d;
\echo :LAST_ERROR_SQLSTATE
-- Only returned frames are converted: a bad payload in frame 0 does not stop frames 1..2.
SELECT d.idx, d.transaction_id
  FROM golden g, queen_ext.segment_decode(set_byte(g.body, 64, 255), 0, 1) d
 WHERE g.name = 'three' ORDER BY d.idx;

-- 7. Declarations.
SELECT p.oid::regprocedure AS function, p.provolatile AS volatile, p.proisstrict AS strict,
       p.proparallel AS parallel, p.proretset AS set_returning
  FROM pg_proc p
 WHERE p.oid IN ('queen_ext.segment_decode(bytea, bigint, bigint, bigint)'::regprocedure,
                 'queen_ext.segment_header(bytea)'::regprocedure)
 ORDER BY 1;

-- Leave the database as this suite found it (later suites expect their codec path).
\if :ext_was_absent
DROP EXTENSION queen_ext;
\endif
