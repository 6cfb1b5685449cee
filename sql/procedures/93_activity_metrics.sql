-- Per-minute activity counters (migration 17; docs/status-and-analytics.md): how a broker's
-- flush adds its counts, how partition counts come from the stats snapshot, how old rows go,
-- and the time buckets every status and analytics route uses.

-- queen.gauge_merge(a, b): one gauge over the samples of both (NULL-safe on either side).
CREATE OR REPLACE FUNCTION queen.gauge_merge(a queen.gauge, b queen.gauge)
RETURNS queen.gauge
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN a IS NULL OR coalesce((a).n, 0) = 0 THEN b
        WHEN b IS NULL OR coalesce((b).n, 0) = 0 THEN a
        ELSE ROW((a).n + (b).n, (a).sum + (b).sum, least((a).min, (b).min), greatest((a).max, (b).max),
                 (b).last)::queen.gauge
    END
$$;
COMMENT ON FUNCTION queen.gauge_merge(queen.gauge, queen.gauge) IS
  'The gauge over the samples of both; last is the second''s.';

-- queen.gauge_avg(g): the mean of a gauge's samples, NULL without a sample.
CREATE OR REPLACE FUNCTION queen.gauge_avg(g queen.gauge)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN coalesce((g).n, 0) > 0 THEN (g).sum / (g).n END $$;
COMMENT ON FUNCTION queen.gauge_avg(queen.gauge) IS 'Mean of the samples; NULL without one.';

-- Aggregate over rows in time order (ORDER BY minute), so that last is the newest sample.
CREATE OR REPLACE AGGREGATE queen.gauge_sum(queen.gauge) (
    SFUNC = queen.gauge_merge,
    STYPE = queen.gauge
);

-- queen.bucket_minutes(from, to): the bucket width of docs/http-api.md "Time windows and counts".
CREATE OR REPLACE FUNCTION queen.bucket_minutes(p_from timestamptz, p_to timestamptz)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p_to - p_from <= interval '60 minutes' THEN 1
                WHEN p_to - p_from <= interval '6 hours' THEN 5
                WHEN p_to - p_from <= interval '24 hours' THEN 15
                WHEN p_to - p_from <= interval '7 days' THEN 60
                ELSE 360 END
$$;
COMMENT ON FUNCTION queen.bucket_minutes(timestamptz, timestamptz) IS
  'Bucket width in minutes for a window: 1, 5, 15, 60 or 360.';

-- queen.bucket_start(t, minutes): the start of t's bucket, counted from 00:00 UTC.
CREATE OR REPLACE FUNCTION queen.bucket_start(p_at timestamptz, p_minutes integer)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT date_bin(make_interval(mins => p_minutes), p_at, timestamptz '2000-01-01 00:00:00+00') $$;
COMMENT ON FUNCTION queen.bucket_start(timestamptz, integer) IS
  'Start of the bucket of the given width holding t; buckets start at multiples from 00:00 UTC.';

-- queen.iso_time(t): UTC ISO-8601 with microseconds, the one time format of the answers.
CREATE OR REPLACE FUNCTION queen.iso_time(p_at timestamptz)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') $$;
COMMENT ON FUNCTION queen.iso_time(timestamptz) IS 'UTC ISO-8601 text with microseconds.';

-- queen.flush_activity(doc): adds one broker's counts of one minute. doc is
-- {minute, hostname, port, retention_days, broker:{every counter and gauge column of
-- broker_metrics}, queues:[{queue_name, queue_metrics counters, parked_avg}]}; every count adds to what the
-- minute's rows hold (a broker may flush a minute twice: at shutdown, or after a failed
-- flush), gauges merge, and the totals row grows by the broker's counts. Rows older than
-- retention_days go.
CREATE OR REPLACE FUNCTION queen.flush_activity(p_doc jsonb)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_minute timestamptz := date_trunc('minute', (p_doc->>'minute')::timestamptz);
    v_host   text := p_doc->>'hostname';
    v_port   integer := (p_doc->>'port')::integer;
    b        queen.broker_metrics;
BEGIN
    b := jsonb_populate_record(NULL::queen.broker_metrics,
                               coalesce(p_doc->'broker', '{}') ||
                               jsonb_build_object('minute', v_minute, 'hostname', v_host, 'port', v_port));
    INSERT INTO queen.broker_metrics AS t SELECT (b).*
    ON CONFLICT (minute, hostname, port) DO UPDATE SET
        push_requests = t.push_requests + excluded.push_requests,
        push_messages = t.push_messages + excluded.push_messages,
        pop_requests = t.pop_requests + excluded.pop_requests,
        pop_messages = t.pop_messages + excluded.pop_messages,
        pop_empty = t.pop_empty + excluded.pop_empty,
        ack_requests = t.ack_requests + excluded.ack_requests,
        ack_messages = t.ack_messages + excluded.ack_messages,
        ack_success = t.ack_success + excluded.ack_success,
        ack_failed = t.ack_failed + excluded.ack_failed,
        transaction_requests = t.transaction_requests + excluded.transaction_requests,
        dead_lettered = t.dead_lettered + excluded.dead_lettered,
        db_calls = t.db_calls + excluded.db_calls,
        db_errors = t.db_errors + excluded.db_errors,
        pop_lag_sum_ms = t.pop_lag_sum_ms + excluded.pop_lag_sum_ms,
        pop_lag_count = t.pop_lag_count + excluded.pop_lag_count,
        pop_lag_max_ms = greatest(t.pop_lag_max_ms, excluded.pop_lag_max_ms),
        loop_lag_ms = queen.gauge_merge(t.loop_lag_ms, excluded.loop_lag_ms),
        cpu_user = queen.gauge_merge(t.cpu_user, excluded.cpu_user),
        cpu_system = queen.gauge_merge(t.cpu_system, excluded.cpu_system),
        rss_bytes = queen.gauge_merge(t.rss_bytes, excluded.rss_bytes),
        virtual_bytes = queen.gauge_merge(t.virtual_bytes, excluded.virtual_bytes),
        pool_size = queen.gauge_merge(t.pool_size, excluded.pool_size),
        pool_idle = queen.gauge_merge(t.pool_idle, excluded.pool_idle),
        pool_active = queen.gauge_merge(t.pool_active, excluded.pool_active),
        pool_waiting = queen.gauge_merge(t.pool_waiting, excluded.pool_waiting),
        background_jobs = queen.gauge_merge(t.background_jobs, excluded.background_jobs),
        parked = queen.gauge_merge(t.parked, excluded.parked);

    INSERT INTO queen.queue_metrics AS t (minute, queue_name, push_requests, push_messages, pop_messages, pop_empty,
                                          ack_requests, ack_success, ack_failed, transactions, pop_lag_sum_ms,
                                          pop_lag_count, pop_lag_max_ms, parked_avg)
    SELECT v_minute, q.queue_name, coalesce(q.push_requests, 0), coalesce(q.push_messages, 0),
           coalesce(q.pop_messages, 0), coalesce(q.pop_empty, 0), coalesce(q.ack_requests, 0),
           coalesce(q.ack_success, 0), coalesce(q.ack_failed, 0), coalesce(q.transactions, 0),
           coalesce(q.pop_lag_sum_ms, 0), coalesce(q.pop_lag_count, 0), coalesce(q.pop_lag_max_ms, 0),
           coalesce(q.parked_avg, 0)
      FROM jsonb_populate_recordset(NULL::queen.queue_metrics, coalesce(p_doc->'queues', '[]')) q
     WHERE q.queue_name IS NOT NULL
    ON CONFLICT (minute, queue_name) DO UPDATE SET
        push_requests = t.push_requests + excluded.push_requests,
        push_messages = t.push_messages + excluded.push_messages,
        pop_messages = t.pop_messages + excluded.pop_messages,
        pop_empty = t.pop_empty + excluded.pop_empty,
        ack_requests = t.ack_requests + excluded.ack_requests,
        ack_success = t.ack_success + excluded.ack_success,
        ack_failed = t.ack_failed + excluded.ack_failed,
        transactions = t.transactions + excluded.transactions,
        pop_lag_sum_ms = t.pop_lag_sum_ms + excluded.pop_lag_sum_ms,
        pop_lag_count = t.pop_lag_count + excluded.pop_lag_count,
        pop_lag_max_ms = greatest(t.pop_lag_max_ms, excluded.pop_lag_max_ms),
        parked_avg = t.parked_avg + excluded.parked_avg;

    INSERT INTO queen.queue_parked_metrics AS t (minute, queue_name, hostname, port, parked_avg)
    SELECT v_minute, q.queue_name, v_host, v_port, q.parked_avg
      FROM jsonb_populate_recordset(NULL::queen.queue_metrics, coalesce(p_doc->'queues', '[]')) q
     WHERE q.queue_name IS NOT NULL AND q.parked_avg > 0
    ON CONFLICT (minute, queue_name, hostname, port) DO UPDATE SET parked_avg = t.parked_avg + excluded.parked_avg;

    UPDATE queen.metrics_totals t SET
        push_requests = t.push_requests + b.push_requests,
        push_messages = t.push_messages + b.push_messages,
        pop_requests = t.pop_requests + b.pop_requests,
        pop_messages = t.pop_messages + b.pop_messages,
        ack_requests = t.ack_requests + b.ack_requests,
        ack_messages = t.ack_messages + b.ack_messages,
        ack_success = t.ack_success + b.ack_success,
        ack_failed = t.ack_failed + b.ack_failed,
        transaction_requests = t.transaction_requests + b.transaction_requests,
        dead_lettered = t.dead_lettered + b.dead_lettered,
        db_errors = t.db_errors + b.db_errors
     WHERE t.id;

    IF p_doc ? 'retention_days' THEN
        PERFORM queen.trim_activity((p_doc->>'retention_days')::integer);
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.flush_activity(jsonb) IS
  'Adds one broker''s counts of one minute to broker_metrics, queue_metrics and metrics_totals.';

-- queen.trim_activity(days): deletes activity rows older than days (an index range each).
CREATE OR REPLACE FUNCTION queen.trim_activity(p_days integer)
RETURNS void
LANGUAGE sql
AS $$
    DELETE FROM queen.broker_metrics WHERE minute < now() - make_interval(days => p_days);
    DELETE FROM queen.queue_metrics WHERE minute < now() - make_interval(days => p_days);
    DELETE FROM queen.queue_parked_metrics WHERE minute < now() - make_interval(days => p_days);
    DELETE FROM queen.retention_history WHERE run_at < now() - make_interval(days => p_days);
$$;
COMMENT ON FUNCTION queen.trim_activity(integer) IS 'Deletes activity rows older than the given days.';

-- queen.record_partition_activity(snapshot): per queue of a finished snapshot, its partition
-- count (the largest of the minute), the partitions it saw first, and the partitions gone
-- since the snapshot before it (previous + created − now, never below 0), in the current
-- minute of queue_metrics.
CREATE OR REPLACE FUNCTION queen.record_partition_activity(p_snapshot_id bigint)
RETURNS void
LANGUAGE sql
AS $$
    WITH prev AS (
        SELECT max(s.id) AS id FROM queen.stats_snapshots s
         WHERE s.id < p_snapshot_id AND s.taken_at IS NOT NULL
    ), now_counts AS (
        SELECT qs.queue_id, sum(qs.partitions) AS partitions, sum(qs.created_since_previous) AS created
          FROM queen.queue_stats qs WHERE qs.snapshot_id = p_snapshot_id GROUP BY qs.queue_id
    ), prev_counts AS (
        SELECT qs.queue_id, sum(qs.partitions) AS partitions
          FROM queen.queue_stats qs, prev WHERE qs.snapshot_id = prev.id GROUP BY qs.queue_id
    )
    INSERT INTO queen.queue_metrics AS t (minute, queue_name, partitions_created, partitions_deleted, partition_count)
    SELECT date_trunc('minute', now()), q.name, coalesce(n.created, 0),
           CASE WHEN (SELECT id FROM prev) IS NULL THEN 0
                ELSE greatest(coalesce(p.partitions, 0) + coalesce(n.created, 0) - coalesce(n.partitions, 0), 0) END,
           coalesce(n.partitions, 0)
      FROM now_counts n
      FULL JOIN prev_counts p ON p.queue_id = n.queue_id
      JOIN queen.queues q ON q.id = coalesce(n.queue_id, p.queue_id)
    ON CONFLICT (minute, queue_name) DO UPDATE SET
        partitions_created = t.partitions_created + excluded.partitions_created,
        partitions_deleted = t.partitions_deleted + excluded.partitions_deleted,
        partition_count = greatest(t.partition_count, excluded.partition_count)
$$;
COMMENT ON FUNCTION queen.record_partition_activity(bigint) IS
  'Partition count, created and deleted partitions per queue of a snapshot, into the current minute.';

-- queen.record_retention(partition ids, segment last offsets, kind): before a retention run
-- deletes those segments, one retention_history row per partition with the messages they
-- hold, as retention_msgs (kind 'retention') or completed_retention_msgs ('completed').
DROP FUNCTION IF EXISTS queen.record_retention(bigint[], bigint[], text);  -- it returns its counts now
CREATE FUNCTION queen.record_retention(p_partition_ids bigint[], p_last_offsets bigint[], p_kind text)
RETURNS jsonb
LANGUAGE sql
AS $$
    WITH recorded AS (
        INSERT INTO queen.retention_history (run_at, queue_name, partition_id, retention_msgs, completed_retention_msgs)
        SELECT now(), q.name, s.partition_id,
               CASE WHEN p_kind = 'retention' THEN sum(s.last_offset - s.first_offset + 1) ELSE 0 END,
               CASE WHEN p_kind = 'completed' THEN sum(s.last_offset - s.first_offset + 1) ELSE 0 END
          FROM unnest(p_partition_ids, p_last_offsets) AS d(id, off)
          JOIN queen.log_segments s ON s.partition_id = d.id AND s.last_offset = d.off
          JOIN queen.log_partitions p ON p.id = s.partition_id
          JOIN queen.queues q ON q.id = p.queue_id
         GROUP BY q.name, s.partition_id
        RETURNING queue_name, retention_msgs + completed_retention_msgs AS messages
    )
    SELECT coalesce(jsonb_agg(jsonb_build_object('queue', r.queue_name, 'kind', p_kind, 'messages', r.messages)), '[]')
      FROM (SELECT queue_name, sum(messages) AS messages FROM recorded GROUP BY queue_name) r
$$;
COMMENT ON FUNCTION queen.record_retention(bigint[], bigint[], text) IS
  'Records, per partition, the messages of segments a retention run is about to delete; their count per queue.';

-- queen.record_eviction(partition, messages): messages of a partition that housekeeping moved
-- to the dead letters for maxWaitTimeSeconds, as one retention_history row.
CREATE OR REPLACE FUNCTION queen.record_eviction(p_partition_id bigint, p_messages bigint)
RETURNS void
LANGUAGE sql
AS $$
    INSERT INTO queen.retention_history (run_at, queue_name, partition_id, eviction_msgs)
    SELECT now(), q.name, p.id, p_messages
      FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
     WHERE p.id = p_partition_id AND p_messages > 0
$$;
COMMENT ON FUNCTION queen.record_eviction(bigint, bigint) IS
  'Records messages of a partition that housekeeping dead-lettered for maxWaitTimeSeconds.';
