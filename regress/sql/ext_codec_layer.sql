-- The codec layer (sql/procedures/15_codec_layer.sql) follows the database's state: plain SQL
-- and raw segments without queen_ext, the extension's functions and zstd segments with it;
-- DROP EXTENSION needs no CASCADE and leaves every row readable as far as SQL can.
SET client_min_messages = warning;
\set VERBOSITY terse
DROP EXTENSION IF EXISTS queen_ext;

-- stock: raw segments, plain SQL
SELECT queen.codec_extension() IS NULL AS no_extension, queen.codec_path();
SELECT status, "offset" FROM queen.send_batch('layer', ARRAY(
    SELECT jsonb_build_object('n', g, 'text', 'a compressible message body number ' || g)
      FROM generate_series(1, 20) g), 'p');
SELECT s.first_offset, s.last_offset, s.codec FROM queen.log_segments s
  JOIN queen.log_partitions p ON p.id = s.partition_id WHERE p.name = 'p' ORDER BY s.first_offset;

-- with the extension: zstd segments, decoded by queen.messages; raw rows stay readable
CREATE EXTENSION queen_ext;
SELECT queen.codec_extension() IS NOT NULL AS has_extension, queen.codec_path();
SELECT status, "offset" FROM queen.send_batch('layer', ARRAY(
    SELECT jsonb_build_object('n', g, 'text', 'a compressible message body number ' || g)
      FROM generate_series(21, 40) g), 'p');
-- a single small message is kept raw: zstd would not make it smaller
SELECT status, "offset" FROM queen.send('layer', '1', 'p');
SELECT s.first_offset, s.last_offset, s.codec FROM queen.log_segments s
  JOIN queen.log_partitions p ON p.id = s.partition_id WHERE p.name = 'p' ORDER BY s.first_offset;
SELECT codec, count(*), count(payload), min(payload->>'n'), max("offset")
  FROM queen.messages WHERE queue = 'layer' GROUP BY codec ORDER BY codec;
SELECT "offset", payload FROM queen.message(queen.message_id(
    (SELECT id FROM queen.log_partitions WHERE name = 'p'), 30));
-- the codec layer's decoder and the SQL codec agree on a raw segment
SELECT count(*) AS differing_frames FROM (
    SELECT * FROM queen.decode_segment((SELECT body FROM queen.log_segments WHERE codec = 0 ORDER BY first_offset LIMIT 1))
    EXCEPT
    SELECT * FROM queen.segment_frames((SELECT body FROM queen.log_segments WHERE codec = 0 ORDER BY first_offset LIMIT 1))) d;
-- dedup through the extension's probe: ids of both segments are duplicates
SELECT status, "offset" FROM queen.send('layer', '{"again": true}', 'p',
    (SELECT transaction_id FROM queen.messages WHERE queue = 'layer' AND "offset" = 5));
SELECT status, "offset" FROM queen.send('layer', '{"again": true}', 'p',
    (SELECT transaction_id FROM queen.messages WHERE queue = 'layer' AND "offset" = 25));
SELECT d.idx, d.msg_offset FROM queen.dedup_probe(
    (SELECT array_fill(id, ARRAY[3]) FROM queen.log_partitions WHERE name = 'p'),
    ARRAY[(SELECT transaction_id FROM queen.messages WHERE queue = 'layer' AND "offset" = 25), 'unknown', NULL]) d;
-- the SQL API claims across raw and zstd segments
SELECT "offset", payload->>'n' AS n FROM queen.claim('layer', 'g', 100, 'p') WHERE "offset" IN (1, 20, 21, 40, 41);

-- DROP EXTENSION without CASCADE: nothing depends on it
DROP EXTENSION queen_ext;
SELECT queen.codec_path(), (SELECT count(*) FROM pg_namespace WHERE nspname = 'queen_ext') AS queen_ext_schemas;
-- zstd rows show with their codec and NULL payload columns; raw rows are decoded
SELECT codec, count(*), count(payload), count(transaction_id) FROM queen.messages
 WHERE queue = 'layer' GROUP BY codec ORDER BY codec;
-- pushes work again on the stock path (raw), and dedup still finds ids through log_dedup
SELECT status, "offset" FROM queen.send('layer', '{"after": "drop"}', 'p');
SELECT status, "offset" FROM queen.send('layer', '{"again": true}', 'p',
    (SELECT transaction_id FROM queen.messages WHERE queue = 'layer' AND "offset" = 5));
SELECT codec FROM queen.log_segments ORDER BY partition_id, first_offset DESC LIMIT 1;

-- leave the database as the later suites expect it
SELECT queen.delete_queue('layer') AS deleted;
SELECT count(*) AS segments_left FROM queen.log_segments;
