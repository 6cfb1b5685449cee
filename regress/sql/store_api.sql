-- The queen.* functions the broker's store layer calls instead of reading tables itself
-- (docs/architecture.md, "Processes and layers"): queue_encryption, database_health,
-- notify_brokers, live_span_segments.
\set VERBOSITY terse
SET client_min_messages = warning;

SELECT queue_id > 0 AS configured FROM queen.configure('enc_yes', NULL, NULL, '{"encryptionEnabled": true}');
SELECT queue_id > 0 AS configured FROM queen.configure('enc_no', NULL, NULL, '{}');
SELECT * FROM queen.queue_encryption(ARRAY['enc_yes', 'enc_no', 'missing']) ORDER BY 1;
SELECT * FROM queen.queue_encryption('{}');

SELECT server_version = current_setting('server_version') AS version_ok,
       extension_version IS NOT DISTINCT FROM queen.codec_extension() AS extension_ok
  FROM queen.database_health();

-- one notification per payload, on the given channel, at commit (delivery to other
-- sessions is what the integration suite's cross-broker wake-ups check; psql would print the
-- sender's PID here)
SELECT queen.notify_brokers('store_api_test', ARRAY['a', 'b']);
SELECT queen.notify_brokers('store_api_test', '{}');

-- segments SQL cannot decode (codec <> raw) that overlap a live leased span
SELECT count(*) FROM queen.push(ARRAY['spans'], ARRAY['p1'], ARRAY[3], ARRAY['t1', 't2', 't3'],
                                ARRAY[NULL, NULL, NULL]::uuid[], ARRAY[NULL, NULL, NULL]::text[],
                                ARRAY['1', '2', '3']);
SELECT count(*) FROM queen.push(ARRAY['spans'], ARRAY['p1'], ARRAY[1], ARRAY['t4'], ARRAY[NULL]::uuid[],
                                ARRAY[NULL]::text[], ARRAY['4']);
SELECT id AS pid FROM queen.log_partitions WHERE name = 'p1' \gset
-- no live span yet: nothing, whatever the codec
SELECT count(*) FROM queen.live_span_segments(ARRAY[:pid]::bigint[], ARRAY['g']);
SELECT count(*) AS claimed FROM queen.pop('spans', 'p1', 'g', 2, 1, false, true, NULL);
-- a live span over raw segments: SQL decodes those itself, so nothing
SELECT count(*) FROM queen.live_span_segments(ARRAY[:pid]::bigint[], ARRAY['g']);
-- the same span as if its first segment were zstd (what queen_ext writes): listed, with the span
UPDATE queen.log_segments SET codec = 1 WHERE partition_id = :pid AND first_offset = 1;
SELECT consumer_group, committed, lease_end, first_offset, octet_length(body) > 0 AS has_body
  FROM queen.live_span_segments(ARRAY[:pid, :pid]::bigint[], ARRAY['g', 'other']);
UPDATE queen.log_segments SET codec = 0 WHERE partition_id = :pid;

SELECT queen.delete_queue('enc_yes'), queen.delete_queue('enc_no'), queen.delete_queue('spans');
