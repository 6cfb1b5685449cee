-- The pure-SQL segment codec (sql/procedures/10_codec.sql) against the v1 golden vectors of
-- tests/unit/segment_golden_test.cpp, round trips, and corrupt input.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET client_min_messages = warning;
\set SHOW_CONTEXT never

CREATE TEMP TABLE golden (name text PRIMARY KEY, body bytea);
INSERT INTO golden VALUES
  ('three', decode('515345470100000000000003000000730000003100060a24181e4000000474782d310100112233445566778899aabbccddeeff0005616c696365000000077b2261223a317d0000001700060a24181e4000000474782d3200ffff000000025b5d0000001f00060a24181e4000000474782d330000000000000a7b226b223a22c3a9227d', 'hex')),
  ('one', decode('5153454701000000000000010000001600000012ffffffffffffffff00017400ffff00000000', 'hex')),
  -- The three frames of 'three', compressed by the C encoder (zstd level 3).
  ('zstd', decode('5153454701010000000000030000007328b52ffd20730d030044050000003100060a24181e4000000474782d310100112233445566778899aabbccddeeff0005616c696365000000077b2261223a317d000000173200ffff000000025b5d0000001f33000a7b226b223a22c3a9227d03003801f379a8c4878202', 'hex'));

-- 1. segment_pack_raw writes the golden bytes.
SELECT encode(queen.segment_pack_raw('2023-11-14 22:13:20+00',
         ARRAY['tx-1', 'tx-2', 'tx-3'],
         ARRAY['00112233-4455-6677-8899-aabbccddeeff', NULL, NULL]::uuid[],
         ARRAY['alice', NULL, ''],
         ARRAY['{"a":1}', '[]', '{"k":"é"}']), 'hex') AS three_hex;
SELECT queen.segment_pack_raw('2023-11-14 22:13:20+00',
         ARRAY['tx-1', 'tx-2', 'tx-3'],
         ARRAY['00112233-4455-6677-8899-aabbccddeeff', NULL, NULL]::uuid[],
         ARRAY['alice', NULL, ''],
         ARRAY['{"a":1}', '[]', '{"k":"é"}']) = body AS three_matches_golden
  FROM golden WHERE name = 'three';
SELECT encode(queen.segment_pack_raw('1969-12-31 23:59:59.999999+00', ARRAY['t'], NULL, NULL,
                                     ARRAY['']), 'hex') AS one_hex;
SELECT queen.segment_pack_raw('1969-12-31 23:59:59.999999+00', ARRAY['t'],
                              ARRAY[NULL]::uuid[], ARRAY[NULL]::text[], ARRAY['']) = body
       AS one_matches_golden_with_null_elements
  FROM golden WHERE name = 'one';

-- 2. segment_frames reads the golden bytes.
SELECT f.* FROM golden g, queen.segment_frames(g.body) f WHERE g.name = 'three' ORDER BY f.idx;
SELECT f.*, f.producer_sub IS NULL AS producer_is_null, f.payload = '' AS payload_is_empty
  FROM golden g, queen.segment_frames(g.body) f WHERE g.name = 'one';
SELECT name, queen.segment_codec(body), queen.segment_frame_count(body),
       (queen.segment_header(body)).raw_length, octet_length(body)
  FROM golden ORDER BY name;
-- The empty producer of frame 2 is '' and not NULL; frame 1 has none at all.
SELECT f.idx, f.producer_sub IS NULL AS producer_is_null, f.trace_id IS NULL AS trace_is_null,
       octet_length(f.payload) AS payload_bytes, length(f.payload) AS payload_chars
  FROM golden g, queen.segment_frames(g.body) f WHERE g.name = 'three' ORDER BY f.idx;

-- 3. zstd: rows with idx only; the extension decodes them.
SELECT f.*, f.created_at IS NULL AND f.transaction_id IS NULL AND f.trace_id IS NULL
            AND f.producer_sub IS NULL AND f.payload IS NULL AS all_null
  FROM golden g, queen.segment_frames(g.body) f WHERE g.name = 'zstd' ORDER BY f.idx;

-- 4. Round trips.
-- Unicode, NULL trace/producer, empty producer, empty payload, 255-byte txid, 1024-byte producer.
WITH input(txids, traces, producers, payloads) AS (
  VALUES (ARRAY['a', repeat('x', 255), 'ü-tx', 'tx'],
          ARRAY[NULL, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', NULL, NULL]::uuid[],
          ARRAY[NULL, '', repeat('p', 1024), 'prod-é'],
          ARRAY['', '{"emoji":"😀","cjk":"漢字","rtl":"שלום"}', '"\u0000 escaped"', '[1,2,3]']))
SELECT f.idx, f.created_at, length(f.transaction_id) AS txid_chars, f.trace_id,
       length(f.producer_sub) AS producer_chars, f.payload,
       f.transaction_id = i.txids[f.idx + 1]
         AND f.trace_id IS NOT DISTINCT FROM i.traces[f.idx + 1]
         AND f.producer_sub IS NOT DISTINCT FROM i.producers[f.idx + 1]
         AND f.payload = i.payloads[f.idx + 1] AS same
  FROM input i,
       queen.segment_frames(queen.segment_pack_raw('2024-02-29 12:34:56.789012+00', i.txids,
                                                   i.traces, i.producers, i.payloads)) f
 ORDER BY f.idx;
-- 10,000 frames, every one equal to its input.
CREATE TEMP TABLE many AS
  SELECT i, 'tx-' || i AS txid,
         CASE WHEN i % 2 = 0 THEN md5(i::text)::uuid END AS trace,
         CASE WHEN i % 3 = 0 THEN 'producer-' || (i % 7) END AS producer,
         '{"i":' || i || ',"s":"' || repeat('é', i % 50) || '"}' AS payload
    FROM generate_series(1, 10000) i;
CREATE TEMP TABLE many_packed AS
  SELECT queen.segment_pack_raw('2000-01-01 00:00:00+00', array_agg(txid ORDER BY i),
                                array_agg(trace ORDER BY i), array_agg(producer ORDER BY i),
                                array_agg(payload ORDER BY i)) AS body
    FROM many;
SELECT queen.segment_codec(body), queen.segment_frame_count(body), octet_length(body)
  FROM many_packed;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE f.created_at = '2000-01-01 00:00:00+00'
                          AND f.transaction_id = m.txid
                          AND f.trace_id IS NOT DISTINCT FROM m.trace
                          AND f.producer_sub IS NOT DISTINCT FROM m.producer
                          AND f.payload = m.payload) AS equal_rows
  FROM many_packed p, queen.segment_frames(p.body) f
  JOIN many m ON m.i = f.idx + 1;
-- created_at survives to the microsecond, before and after the epoch.
SELECT t, f.created_at = t AS same
  FROM unnest(ARRAY['1970-01-01 00:00:00+00', '1969-07-20 20:17:40.000001+00',
                    '2038-01-19 03:14:08.999999+00', '9999-12-31 23:59:59.999999+00',
                    '0001-01-01 00:00:00+00', '4713-11-24 00:00:00.000001+00 BC',
                    '1500-01-01 00:00:00.000001+00', '294247-01-01 00:00:00.000001+00'
                   ]::timestamptz[]) t,
       queen.segment_frames(queen.segment_pack_raw(t, ARRAY['x'], NULL, NULL, ARRAY['{}'])) f
 ORDER BY t;
-- STRICT readers: NULL in, nothing out.
SELECT queen.segment_codec(NULL) IS NULL AS codec_null,
       queen.segment_frame_count(NULL) IS NULL AS count_null,
       (SELECT count(*) FROM queen.segment_frames(NULL)) AS frames_of_null;

-- 5. Corrupt segments: XX001, message "segment: ...".
SELECT queen.segment_codec(decode('5153454701000000', 'hex'));
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_codec('\x'::bytea);
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_codec(set_byte(body, 0, 120)) FROM golden WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_frame_count(set_byte(body, 4, 2)) FROM golden WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_codec(set_byte(body, 5, 2)) FROM golden WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_codec(set_byte(body, 7, 1)) FROM golden WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
-- frame_count 0, 4 (frames end after 3), 2 (a frame after the count), 2^32-1 (cannot fit)
SELECT queen.segment_frame_count(set_byte(body, 11, 0)) FROM golden WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM golden g, queen.segment_frames(set_byte(g.body, 11, 4)) WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM golden g, queen.segment_frames(set_byte(g.body, 11, 2)) WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_frame_count(overlay(body placing '\xffffffff'::bytea from 9 for 4))
  FROM golden WHERE name = 'zstd';
\echo :LAST_ERROR_SQLSTATE
-- truncated body, trailing bytes, empty zstd body
SELECT count(*) FROM golden g, queen.segment_frames(substring(g.body from 1 for 130))
 WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM golden g, queen.segment_frames(g.body || '\x00'::bytea) WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_codec(substring(body from 1 for 16)) FROM golden WHERE name = 'zstd';
\echo :LAST_ERROR_SQLSTATE
-- Inside raw_length, after the last frame (raw_length and body both one byte longer).
SELECT count(*) FROM golden g,
       queen.segment_frames(set_byte(g.body, 15, 116) || '\x00'::bytea) WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
-- frame_length of frame 0 one short, one long, past the end
SELECT count(*) FROM golden g, queen.segment_frames(set_byte(g.body, 19, 48)) WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM golden g, queen.segment_frames(set_byte(g.body, 19, 50)) WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM golden g, queen.segment_frames(set_byte(g.body, 18, 1)) WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
-- txid_length 0 in frame 1, trace flag 2 in frame 1, producer_length 1025 in frame 2
SELECT count(*) FROM golden g, queen.segment_frames(set_byte(g.body, 82, 0)) WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM golden g, queen.segment_frames(set_byte(g.body, 87, 2)) WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM golden g,
       queen.segment_frames(set_byte(set_byte(g.body, 115, 4), 116, 1)) WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE
-- A payload that is not UTF-8 (0xff in place of the 'a' of {"a":1}): PostgreSQL's 22021.
SELECT count(*) FROM golden g, queen.segment_frames(set_byte(g.body, 64, 255)) WHERE name = 'three';
\echo :LAST_ERROR_SQLSTATE

-- 6. Bad arguments to segment_pack_raw: 22023.
SELECT queen.segment_pack_raw(NULL, ARRAY['t'], NULL, NULL, ARRAY['{}']);
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_pack_raw('infinity', ARRAY['t'], NULL, NULL, ARRAY['{}']);
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_pack_raw('294248-01-01 00:00:00+00', ARRAY['t'], NULL, NULL, ARRAY['{}']);
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_pack_raw(now(), ARRAY[]::text[], NULL, NULL, ARRAY[]::text[]);
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_pack_raw(now(), NULL, NULL, NULL, ARRAY['{}']);
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_pack_raw(now(), ARRAY['t', 'u'], NULL, NULL, ARRAY['{}']);
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_pack_raw(now(), ARRAY['t'], ARRAY[NULL, NULL]::uuid[], NULL, ARRAY['{}']);
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_pack_raw(now(), ARRAY[['t'], ['u']], NULL, NULL, ARRAY[['{}'], ['{}']]);
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_pack_raw(now(), ARRAY['t', ''], NULL, NULL, ARRAY['{}', '{}']);
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_pack_raw(now(), ARRAY['t', NULL], NULL, NULL, ARRAY['{}', '{}']);
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_pack_raw(now(), ARRAY['t', repeat('é', 128)], NULL, NULL, ARRAY['{}', '{}']);
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_pack_raw(now(), ARRAY['t'], NULL, ARRAY[repeat('p', 1025)], ARRAY['{}']);
\echo :LAST_ERROR_SQLSTATE
SELECT queen.segment_pack_raw(now(), ARRAY['t', 'u'], NULL, NULL, ARRAY['{}', NULL]);
\echo :LAST_ERROR_SQLSTATE

-- 7. Declarations.
SELECT p.oid::regprocedure AS function, pg_get_function_result(p.oid) AS result,
       p.provolatile AS volatile, p.proisstrict AS strict, p.proparallel AS parallel,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented
  FROM pg_proc p
 WHERE p.oid IN ('queen.segment_header(bytea)'::regprocedure,
                 'queen.segment_codec(bytea)'::regprocedure,
                 'queen.segment_frame_count(bytea)'::regprocedure,
                 'queen.segment_frames(bytea)'::regprocedure,
                 'queen.segment_pack_raw(timestamptz, text[], uuid[], text[], text[])'::regprocedure)
 ORDER BY p.oid::regprocedure::text;
