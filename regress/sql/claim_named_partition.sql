-- A pop of one named partition finds that partition's cursor by its key
-- (sql/procedures/55_pop.sql), instead of walking the group's claim index up to it: its cost
-- does not grow with the partitions of the queue that have messages waiting. Measured as the
-- rows of log_consumers one pop reads through log_consumers_ready (this transaction's
-- statistics; the walk read one per partition ahead of the one asked for).
SET client_min_messages = warning;
\set VERBOSITY terse

-- 60 partitions, one message each, pushed one by one: p60's cursor is the last in claim order
SELECT count(*) AS pushed FROM (
    SELECT queen.push(ARRAY['named_q'], ARRAY['p' || lpad(i::text, 2, '0')], ARRAY[1], ARRAY['t' || i],
                      ARRAY[NULL::uuid], ARRAY[NULL::text], ARRAY['{}'])
      FROM generate_series(1, 60) i) s;
SELECT count(*) AS registered FROM queen.pop('named_q', 'p01', 'g', 1, 1, true, true, NULL);

CREATE FUNCTION pg_temp.claim_index_rows_read(stmt text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    before bigint := pg_stat_get_xact_tuples_fetched('queen.log_consumers_ready'::regclass);
BEGIN
    EXECUTE stmt;
    RETURN pg_stat_get_xact_tuples_fetched('queen.log_consumers_ready'::regclass) - before;
END;
$$;

-- the pop of p60 hands out p60's message and reads no entry of the claim index
BEGIN;
SELECT pg_temp.claim_index_rows_read(
    $$SELECT * FROM queen.pop('named_q', 'p60', 'g', 10, 1, false, true, NULL)$$) AS claim_index_rows_read;
SELECT p.name, lc.committed, lc.lease_end, lc.lease_id IS NOT NULL AS leased
  FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id
 WHERE lc.consumer_group = 'g' AND p.name = 'p60'
 ORDER BY lc.version DESC LIMIT 1;
COMMIT;

-- the same rules as the queue-wide claim: a live lease, then an empty partition, hand out nothing
SELECT count(*) AS while_leased FROM queen.pop('named_q', 'p60', 'g', 10, 1, false, true, NULL);
SELECT count(*) AS other_partition FROM queen.pop('named_q', 'p59', 'g', 10, 1, true, true, NULL)
 WHERE partition_id IS NOT NULL;
SELECT count(*) AS drained FROM queen.pop('named_q', 'p59', 'g', 10, 1, true, true, NULL);
-- an expired lease is taken over
UPDATE queen.log_consumers lc SET lease_expires_at = now() - interval '1 second'
  FROM queen.log_partitions p
 WHERE p.id = lc.partition_id AND lc.consumer_group = 'g' AND p.name = 'p60' AND lc.lease_id IS NOT NULL;
SELECT partition_name, span_start, span_end, leases_expired IS NULL AS segment_row
  FROM queen.pop('named_q', 'p60', 'g', 10, 1, false, true, NULL);

-- the tests after this one count every queue's rows
SELECT queen.delete_queue('named_q') AS deleted;
