-- queen_ext.segment_pack (ext/segment_pack.c): codec 'raw' byte-identical to
-- queen.segment_pack_raw (golden vectors of regress/sql/codec.sql included), zstd round
-- trips, 'auto', per-frame created_at, NULL handling, bad arguments, and text in a
-- database that is not UTF-8.
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
-- The frames of a segment as one comparable value (idx order; no msg_offset).
CREATE FUNCTION pg_temp.ext_frames(body bytea) RETURNS text LANGUAGE sql IMMUTABLE AS $f$
  SELECT string_agg(format('%s|%s|%s|%s|%s|%s', idx, created_at, transaction_id, trace_id,
                           coalesce(quote_literal(producer_sub), 'NULL'), payload), E'\n' ORDER BY idx)
    FROM queen_ext.segment_decode(body)
$f$;
CREATE FUNCTION pg_temp.sql_frames(body bytea) RETURNS text LANGUAGE sql IMMUTABLE AS $f$
  SELECT string_agg(format('%s|%s|%s|%s|%s|%s', idx, created_at, transaction_id, trace_id,
                           coalesce(quote_literal(producer_sub), 'NULL'), payload), E'\n' ORDER BY idx)
    FROM queen.segment_frames(body)
$f$;

CREATE TEMP TABLE golden (name text PRIMARY KEY, body bytea);
INSERT INTO golden VALUES
  ('three', decode('515345470100000000000003000000730000003100060a24181e4000000474782d310100112233445566778899aabbccddeeff0005616c696365000000077b2261223a317d0000001700060a24181e4000000474782d3200ffff000000025b5d0000001f00060a24181e4000000474782d330000000000000a7b226b223a22c3a9227d', 'hex')),
  ('one', decode('5153454701000000000000010000001600000012ffffffffffffffff00017400ffff00000000', 'hex')),
  ('zstd', decode('5153454701010000000000030000007328b52ffd20730d030044050000003100060a24181e4000000474782d310100112233445566778899aabbccddeeff0005616c696365000000077b2261223a317d000000173200ffff000000025b5d0000001f33000a7b226b223a22c3a9227d03003801f379a8c4878202', 'hex'));

-- 1. Codec 'raw' writes the golden bytes, as queen.segment_pack_raw does.
SELECT encode(queen_ext.segment_pack(array_fill('2023-11-14 22:13:20+00'::timestamptz, ARRAY[3]),
         ARRAY['tx-1', 'tx-2', 'tx-3'],
         ARRAY['00112233-4455-6677-8899-aabbccddeeff', NULL, NULL]::uuid[],
         ARRAY['alice', NULL, ''],
         ARRAY['{"a":1}', '[]', '{"k":"é"}'], 'raw'), 'hex') AS three_hex;
SELECT queen_ext.segment_pack(array_fill('2023-11-14 22:13:20+00'::timestamptz, ARRAY[3]),
         ARRAY['tx-1', 'tx-2', 'tx-3'],
         ARRAY['00112233-4455-6677-8899-aabbccddeeff', NULL, NULL]::uuid[],
         ARRAY['alice', NULL, ''],
         ARRAY['{"a":1}', '[]', '{"k":"é"}'], 'raw') = body AS three_matches_golden
  FROM golden WHERE name = 'three';
SELECT encode(queen_ext.segment_pack(ARRAY['1969-12-31 23:59:59.999999+00']::timestamptz[],
                                     ARRAY['t'], NULL, NULL, ARRAY[''], 'raw'), 'hex') AS one_hex;
SELECT queen_ext.segment_pack(ARRAY['1969-12-31 23:59:59.999999+00']::timestamptz[], ARRAY['t'],
                              ARRAY[NULL]::uuid[], ARRAY[NULL]::text[], ARRAY[''], 'raw') = body
       AS one_matches_golden_with_null_elements
  FROM golden WHERE name = 'one';
-- The three frames at zstd level 3 (the level the golden was made with) decode to the
-- golden frames, with the golden's header. (Compressed sizes are not shown: they depend on
-- the zstd library's version.)
SELECT h.codec, h.frame_count, h.raw_length, pg_temp.ext_frames(z.body) = pg_temp.sql_frames(g.body) AS same_frames
  FROM golden g,
       LATERAL (SELECT queen_ext.segment_pack(array_fill('2023-11-14 22:13:20+00'::timestamptz, ARRAY[3]),
                  ARRAY['tx-1', 'tx-2', 'tx-3'],
                  ARRAY['00112233-4455-6677-8899-aabbccddeeff', NULL, NULL]::uuid[],
                  ARRAY['alice', NULL, ''],
                  ARRAY['{"a":1}', '[]', '{"k":"é"}'], 'zstd', 3) AS body) z,
       queen_ext.segment_header(z.body) h
 WHERE g.name = 'three';

-- 2. Round trips: Unicode, NULL trace/producer, empty producer, empty payload, 255-byte
-- txid, 1024-byte producer; raw equals segment_pack_raw, every codec decodes to the input.
CREATE TEMP TABLE input AS
  SELECT ARRAY['a', repeat('x', 255), 'ü-tx', 'tx'] AS txids,
         ARRAY[NULL, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', NULL, NULL]::uuid[] AS traces,
         ARRAY[NULL, '', repeat('p', 1024), 'prod-é'] AS producers,
         ARRAY['', '{"emoji":"😀","cjk":"漢字","rtl":"שלום"}', '"\u0000 escaped"', '[1,2,3]'] AS payloads;
SELECT c.codec,
       queen_ext.segment_pack(array_fill('2024-02-29 12:34:56.789012+00'::timestamptz, ARRAY[4]),
                              i.txids, i.traces, i.producers, i.payloads, 'raw')
       = queen.segment_pack_raw('2024-02-29 12:34:56.789012+00', i.txids, i.traces, i.producers,
                                i.payloads) AS raw_is_sql_raw,
       (queen_ext.segment_header(queen_ext.segment_pack(
            array_fill('2024-02-29 12:34:56.789012+00'::timestamptz, ARRAY[4]),
            i.txids, i.traces, i.producers, i.payloads, c.codec))).codec AS written_codec,
       pg_temp.ext_frames(queen_ext.segment_pack(
            array_fill('2024-02-29 12:34:56.789012+00'::timestamptz, ARRAY[4]),
            i.txids, i.traces, i.producers, i.payloads, c.codec))
       = pg_temp.sql_frames(queen.segment_pack_raw('2024-02-29 12:34:56.789012+00', i.txids,
                                                   i.traces, i.producers, i.payloads)) AS same_frames
  FROM input i, (VALUES ('raw'), ('zstd'), ('auto')) c(codec)
 ORDER BY c.codec;
SELECT d.idx, d.msg_offset, d.created_at, length(d.transaction_id) AS txid_chars, d.trace_id,
       length(d.producer_sub) AS producer_chars, d.producer_sub IS NULL AS producer_is_null,
       d.payload,
       d.transaction_id = i.txids[d.idx + 1]
         AND d.trace_id IS NOT DISTINCT FROM i.traces[d.idx + 1]
         AND d.producer_sub IS NOT DISTINCT FROM i.producers[d.idx + 1]
         AND d.payload = i.payloads[d.idx + 1] AS same
  FROM input i,
       queen_ext.segment_decode(queen_ext.segment_pack(
           array_fill('2024-02-29 12:34:56.789012+00'::timestamptz, ARRAY[4]),
           i.txids, i.traces, i.producers, i.payloads), 500) d
 ORDER BY d.idx;
-- Defaults: codec 'zstd', level 3.
SELECT queen_ext.segment_pack(array_fill('2024-02-29 12:34:56.789012+00'::timestamptz, ARRAY[4]),
                              i.txids, i.traces, i.producers, i.payloads)
       = queen_ext.segment_pack(array_fill('2024-02-29 12:34:56.789012+00'::timestamptz, ARRAY[4]),
                                i.txids, i.traces, i.producers, i.payloads, 'zstd', 3) AS defaults_are_zstd_3
  FROM input i;

-- 10,000 frames: raw equals segment_pack_raw; zstd at levels 1, 3 and 19 decodes to the
-- frames queen.segment_frames reads from the raw segment, and is smaller.
CREATE TEMP TABLE many AS
  SELECT i, 'tx-' || i AS txid,
         CASE WHEN i % 2 = 0 THEN md5(i::text)::uuid END AS trace,
         CASE WHEN i % 3 = 0 THEN 'producer-' || (i % 7) END AS producer,
         '{"i":' || i || ',"s":"' || repeat('é', i % 50) || '"}' AS payload
    FROM generate_series(1, 10000) i;
CREATE TEMP TABLE many_arrays AS
  SELECT array_agg(txid ORDER BY i) AS txids, array_agg(trace ORDER BY i) AS traces,
         array_agg(producer ORDER BY i) AS producers, array_agg(payload ORDER BY i) AS payloads
    FROM many;
CREATE TEMP TABLE many_raw AS
  SELECT queen.segment_pack_raw('2000-01-01 00:00:00+00', txids, traces, producers, payloads) AS body
    FROM many_arrays;
SELECT queen_ext.segment_pack(array_fill('2000-01-01 00:00:00+00'::timestamptz, ARRAY[10000]),
                              a.txids, a.traces, a.producers, a.payloads, 'raw') = r.body AS raw_is_sql_raw
  FROM many_arrays a, many_raw r;
SELECT l.level, h.codec, h.frame_count, h.raw_length = (queen.segment_header(r.body)).raw_length AS same_raw_length,
       h.stored_length < octet_length(r.body) / 2 AS under_half,
       pg_temp.ext_frames(z.body) = pg_temp.sql_frames(r.body) AS same_frames
  FROM many_arrays a, many_raw r, (VALUES (1), (3), (19)) l(level),
       LATERAL (SELECT queen_ext.segment_pack(array_fill('2000-01-01 00:00:00+00'::timestamptz, ARRAY[10000]),
                                              a.txids, a.traces, a.producers, a.payloads, 'zstd', l.level) AS body) z,
       queen_ext.segment_header(z.body) h
 ORDER BY l.level;

-- 3. 'auto' keeps a segment raw unless zstd makes it smaller.
SELECT h.codec, h.stored_length,
       s.body = queen.segment_pack_raw('2024-01-01 00:00:00+00', ARRAY['t'], NULL, NULL, ARRAY['{}']) AS is_sql_raw
  FROM (SELECT queen_ext.segment_pack(ARRAY['2024-01-01 00:00:00+00']::timestamptz[], ARRAY['t'],
                                      NULL, NULL, ARRAY['{}'], 'auto') AS body) s,
       queen_ext.segment_header(s.body) h;
WITH a AS (SELECT array_fill('2024-01-01 00:00:00+00'::timestamptz, ARRAY[50]) AS ts,
                  array_agg('tx-' || i ORDER BY i) AS txids,
                  array_agg('{"same":"payload"}'::text) AS payloads
             FROM generate_series(1, 50) i)
SELECT h.codec, h.frame_count,
       s.body = queen_ext.segment_pack(a.ts, a.txids, NULL, NULL, a.payloads, 'zstd', 5) AS is_zstd_at_level
  FROM a, LATERAL (SELECT queen_ext.segment_pack(a.ts, a.txids, NULL, NULL, a.payloads, 'auto', 5) AS body) s,
       queen_ext.segment_header(s.body) h;
-- Tiny segments: zstd is never smaller than raw, 'auto' is always raw.
SELECT count(*) AS tiny, count(*) FILTER (WHERE (queen_ext.segment_header(a)).codec = 'raw') AS auto_raw,
       count(*) FILTER (WHERE octet_length(z) >= octet_length(a)) AS zstd_not_smaller
  FROM (SELECT queen_ext.segment_pack(ARRAY['2024-01-01']::timestamptz[], ARRAY['t' || i], NULL, NULL,
                                      ARRAY[repeat('x', i)], 'auto') AS a,
               queen_ext.segment_pack(ARRAY['2024-01-01']::timestamptz[], ARRAY['t' || i], NULL, NULL,
                                      ARRAY[repeat('x', i)], 'zstd') AS z
          FROM generate_series(0, 5) i) s;

-- 4. One created_at per frame, to the microsecond, before and after the epoch, to the ends
-- of the range.
SELECT d.idx, d.created_at, d.created_at = t.ts[d.idx + 1] AS same
  FROM (SELECT ARRAY['1970-01-01 00:00:00+00', '1969-07-20 20:17:40.000001+00',
                     '2038-01-19 03:14:08.999999+00', '9999-12-31 23:59:59.999999+00',
                     '0001-01-01 00:00:00+00', '4713-11-24 00:00:00.000001+00 BC',
                     '1500-01-01 00:00:00.000001+00', '294247-01-01 00:00:00.000001+00',
                     '4714-11-24 00:00:00+00 BC', '294247-01-10 04:00:54.775807+00'
                    ]::timestamptz[] AS ts) t,
       queen_ext.segment_decode(queen_ext.segment_pack(t.ts, array_fill('x'::text, ARRAY[10]),
                                                       NULL, NULL, array_fill('{}'::text, ARRAY[10]))) d
 ORDER BY d.idx;
-- Per frame, created_at is what segment_pack_raw writes for that timestamp. (Not compared:
-- 294247-01-10 04:00:54.775807+00, 2^63-1 us, which the extension writes exactly but
-- segment_pack_raw, through PostgreSQL 15's extract(epoch), as 2^63-8.)
SELECT bool_and(substring(queen_ext.segment_pack(ARRAY[t], ARRAY['x'], NULL, NULL, ARRAY['{}'], 'raw') from 21 for 8)
                = substring(queen.segment_pack_raw(t, ARRAY['x'], NULL, NULL, ARRAY['{}']) from 21 for 8))
       AS same_created_at_bytes
  FROM unnest(ARRAY['1970-01-01 00:00:00+00', '1969-12-31 23:59:59.999999+00',
                    '2000-01-01 00:00:00+00', '4714-11-24 00:00:00+00 BC',
                    '294247-01-10 04:00:54.775806+00']::timestamptz[]) t;
-- A non-1 lower bound does not matter; only the element order does.
SELECT queen_ext.segment_pack('[0:1]={"2024-01-01 00:00:00+00","2024-01-01 00:00:00+00"}'::timestamptz[],
                              '[5:6]={a,b}'::text[], NULL, '[-1:0]={p,NULL}'::text[],
                              '[1:2]={1,2}'::text[], 'raw')
     = queen.segment_pack_raw('2024-01-01 00:00:00+00', ARRAY['a', 'b'], NULL, ARRAY['p', NULL],
                              ARRAY['1', '2']) AS bounds_ignored;

-- 5. Bad arguments: 22023, naming the argument and the 1-based element; same order of
-- checks as segment_pack_raw (txids, then producers, then payloads).
SELECT t.n, pg_temp.err(t.q) AS error
  FROM (VALUES
    (1, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], NULL, NULL, NULL, ARRAY['{}'])$$),
    (2, $$SELECT queen_ext.segment_pack(ARRAY[]::timestamptz[], ARRAY[]::text[], NULL, NULL, ARRAY[]::text[])$$),
    (3, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz, '2024-01-01'::timestamptz], ARRAY[['t'], ['u']], NULL, NULL, ARRAY[['{}'], ['{}']])$$),
    (4, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t', 'u'], NULL, NULL, ARRAY['{}', '{}'])$$),
    (5, $$SELECT queen_ext.segment_pack(NULL, ARRAY['t'], NULL, NULL, ARRAY['{}'])$$),
    (6, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t'], NULL, NULL, NULL)$$),
    (7, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz, '2024-01-01'::timestamptz], ARRAY['t', 'u'], NULL, NULL, ARRAY['{}'])$$),
    (8, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t'], ARRAY[NULL, NULL]::uuid[], NULL, ARRAY['{}'])$$),
    (9, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t'], ARRAY[]::uuid[], NULL, ARRAY['{}'])$$),
    (10, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t'], NULL, ARRAY['a', 'b'], ARRAY['{}'])$$),
    (11, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz, '2024-01-01'::timestamptz], ARRAY['t', 'u'], NULL, ARRAY[['a'], ['b']], ARRAY['{}', '{}'])$$),
    (12, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz, NULL], ARRAY['t', 'u'], NULL, NULL, ARRAY['{}', '{}'])$$),
    (13, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz, 'infinity'], ARRAY['t', 'u'], NULL, NULL, ARRAY['{}', '{}'])$$),
    (14, $$SELECT queen_ext.segment_pack(ARRAY['-infinity'::timestamptz], ARRAY['t'], NULL, NULL, ARRAY['{}'])$$),
    (15, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01', '294248-01-01 00:00:00+00']::timestamptz[], ARRAY['t', 'u'], NULL, NULL, ARRAY['{}', '{}'])$$),
    (16, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz, '2024-01-01'::timestamptz], ARRAY['t', ''], NULL, NULL, ARRAY['{}', '{}'])$$),
    (17, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz, '2024-01-01'::timestamptz], ARRAY['t', NULL], NULL, NULL, ARRAY['{}', '{}'])$$),
    (18, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz, '2024-01-01'::timestamptz, '2024-01-01'::timestamptz], ARRAY['t', 'u', repeat('x', 256)], NULL, NULL, ARRAY['{}', '{}', '{}'])$$),
    (19, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz, '2024-01-01'::timestamptz], ARRAY['t', repeat('é', 128)], NULL, NULL, ARRAY['{}', '{}'])$$),
    (20, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t'], NULL, ARRAY[repeat('p', 1025)], ARRAY['{}'])$$),
    (21, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz, '2024-01-01'::timestamptz], ARRAY['t', 'u'], NULL, ARRAY[NULL, repeat('é', 513)], ARRAY['{}', '{}'])$$),
    (22, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz, '2024-01-01'::timestamptz], ARRAY['t', 'u'], NULL, NULL, ARRAY['{}', NULL])$$),
    (23, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz, '2024-01-01'::timestamptz], ARRAY['t', ''], NULL, NULL, ARRAY[NULL, '{}'])$$),
    (24, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz, '2024-01-01'::timestamptz], ARRAY['t', 'u'], NULL, ARRAY[repeat('p', 1025), NULL], ARRAY[NULL, '{}'])$$),
    (25, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t'], NULL, NULL, ARRAY['{}'], 'lz4')$$),
    (26, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t'], NULL, NULL, ARRAY['{}'], 'ZSTD')$$),
    (27, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t'], NULL, NULL, ARRAY['{}'], NULL)$$),
    (28, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t'], NULL, NULL, ARRAY['{}'], 'zstd', 0)$$),
    (29, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t'], NULL, NULL, ARRAY['{}'], 'zstd', 20)$$),
    (30, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t'], NULL, NULL, ARRAY['{}'], 'zstd', -1)$$),
    (31, $$SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t'], NULL, NULL, ARRAY['{}'], 'raw', NULL)$$)
  ) AS t(n, q)
 ORDER BY t.n;
-- The message of a mismatch has segment_pack_raw's hint; the SQLSTATE, directly.
\set VERBOSITY default
SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t', 'u'], NULL, NULL, ARRAY['{}', '{}']);
\set VERBOSITY terse
\echo :LAST_ERROR_SQLSTATE
SELECT queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY['t'], NULL, NULL, ARRAY['{}'], 'gzip');
\echo :LAST_ERROR_SQLSTATE
-- The limits are inclusive: level 1 and 19, a 255-byte txid, a 1024-byte producer.
SELECT (queen_ext.segment_header(queen_ext.segment_pack(ARRAY['2024-01-01'::timestamptz], ARRAY[repeat('é', 127) || 'x'], NULL,
                                                        ARRAY[repeat('é', 512)], ARRAY['{}'], 'zstd', l))).frame_count
  FROM unnest(ARRAY[1, 19]) l;

-- 6. Declarations.
SELECT p.oid::regprocedure AS function, p.provolatile AS volatile, p.proisstrict AS strict,
       p.proparallel AS parallel, pg_get_function_arguments(p.oid) AS arguments
  FROM pg_proc p
 WHERE p.oid = 'queen_ext.segment_pack(timestamptz[], text[], uuid[], text[], text[], text, integer)'::regprocedure;

-- 7. A database that is not UTF-8: text is converted to UTF-8 in frames and back.
SELECT current_database() AS home_db \gset
CREATE DATABASE regress_queen_ext_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
\c regress_queen_ext_latin1
SET client_min_messages = warning;
\set VERBOSITY terse
CREATE EXTENSION queen_ext;
-- e-acute (chr(233)) is one byte in LATIN1 and two (c3 a9) in the segment: the producer,
-- and the payload of golden frame 3. (No non-ASCII literals here: the client encoding may
-- differ.)
SELECT encode(substring(queen_ext.segment_pack(ARRAY['2024-01-01 00:00:00+00']::timestamptz[],
                                               ARRAY['tx'], NULL, ARRAY[chr(233)],
                                               ARRAY[convert_from('\x7b226b223a22e9227d', 'LATIN1')], 'raw')
                        from 20), 'hex') AS frame_after_length;
-- A txid of 128 LATIN1 characters is 256 bytes of UTF-8: too long.
SELECT queen_ext.segment_pack(ARRAY['2024-01-01 00:00:00+00']::timestamptz[], ARRAY[repeat(chr(233), 128)],
                              NULL, NULL, ARRAY['{}'], 'raw');
\echo :LAST_ERROR_SQLSTATE
-- Decoding converts back; a character LATIN1 cannot hold raises 22P05.
SELECT d.transaction_id = 'tx' AS txid_ok, d.producer_sub = chr(233) AS producer_ok,
       convert_to(d.payload, 'LATIN1') = '\x7b226b223a22e9227d' AS payload_ok
  FROM queen_ext.segment_decode(queen_ext.segment_pack(ARRAY['2024-01-01 00:00:00+00']::timestamptz[],
                                                       ARRAY['tx'], NULL, ARRAY[chr(233)],
                                                       ARRAY[convert_from('\x7b226b223a22e9227d', 'LATIN1')])) d;
SELECT count(*) FROM queen_ext.segment_decode(decode('515345470100000000000001000000190000001'
                                                     '5ffffffffffffffff00017400ffff00000003e6bca2', 'hex'));
\echo :LAST_ERROR_SQLSTATE
\c :home_db
DROP DATABASE regress_queen_ext_latin1;
SET client_min_messages = warning;

-- Leave the database as this suite found it (later suites expect their codec path).
\if :ext_was_absent
DROP EXTENSION queen_ext;
\endif
