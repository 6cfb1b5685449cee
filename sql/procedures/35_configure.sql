-- Queue configuration.
-- queen.queue_options(queue row): the option set as docs/http-api.md spells it (camelCase keys,
--   JSON types), the one mapping between option names and columns.
-- queen.configure(name, namespace, task, options): creates the queue and its Default
--   partition when missing and REPLACES the whole option set: options absent from
--   p_options (or null) return to the column defaults of migration 0001. Types and ranges
--   are checked by the broker before the call.

CREATE OR REPLACE FUNCTION queen.queue_options(q queen.queues)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT jsonb_build_object(
        'leaseTime', q.lease_time,
        'retryLimit', q.retry_limit,
        'retryDelay', q.retry_delay,
        'priority', q.priority,
        'delayedProcessing', q.delayed_processing,
        'windowBuffer', q.window_buffer,
        'maxSize', q.max_size,
        'ttl', q.ttl,
        'retentionEnabled', q.retention_enabled,
        'retentionSeconds', q.retention_seconds,
        'completedRetentionSeconds', q.completed_retention_seconds,
        'maxWaitTimeSeconds', q.max_wait_time_seconds,
        'deadLetterQueue', q.dead_letter_queue,
        'dlqAfterMaxRetries', q.dlq_after_max_retries,
        'encryptionEnabled', q.encryption_enabled,
        'dedupWindowSeconds', q.dedup_window_seconds)
$$;
COMMENT ON FUNCTION queen.queue_options(queen.queues) IS
  'A queue''s options with the names and JSON types of the HTTP API.';

CREATE OR REPLACE FUNCTION queen.configure(p_name text, p_namespace text, p_task text, p_options jsonb)
RETURNS TABLE(queue_id bigint, partition_id bigint, options jsonb)
LANGUAGE plpgsql
AS $$
DECLARE
    v_id bigint;
    o    jsonb := coalesce(p_options, '{}'::jsonb);
BEGIN
    v_id := queen.ensure_queue(p_name);
    UPDATE queen.queues q SET
        lease_time = DEFAULT, retry_limit = DEFAULT, retry_delay = DEFAULT, priority = DEFAULT,
        delayed_processing = DEFAULT, window_buffer = DEFAULT, max_size = DEFAULT, ttl = DEFAULT,
        retention_enabled = DEFAULT, retention_seconds = DEFAULT, completed_retention_seconds = DEFAULT,
        max_wait_time_seconds = DEFAULT, dead_letter_queue = DEFAULT, dlq_after_max_retries = DEFAULT,
        encryption_enabled = DEFAULT, dedup_window_seconds = DEFAULT
     WHERE q.id = v_id;
    UPDATE queen.queues q SET
        namespace = p_namespace,
        task = p_task,
        lease_time = coalesce((o->>'leaseTime')::integer, q.lease_time),
        retry_limit = coalesce((o->>'retryLimit')::integer, q.retry_limit),
        retry_delay = coalesce((o->>'retryDelay')::integer, q.retry_delay),
        priority = coalesce((o->>'priority')::integer, q.priority),
        delayed_processing = coalesce((o->>'delayedProcessing')::integer, q.delayed_processing),
        window_buffer = coalesce((o->>'windowBuffer')::integer, q.window_buffer),
        max_size = coalesce((o->>'maxSize')::bigint, q.max_size),
        ttl = coalesce((o->>'ttl')::integer, q.ttl),
        retention_enabled = coalesce((o->>'retentionEnabled')::boolean, q.retention_enabled),
        retention_seconds = coalesce((o->>'retentionSeconds')::integer, q.retention_seconds),
        completed_retention_seconds = coalesce((o->>'completedRetentionSeconds')::integer, q.completed_retention_seconds),
        max_wait_time_seconds = coalesce((o->>'maxWaitTimeSeconds')::integer, q.max_wait_time_seconds),
        dead_letter_queue = coalesce((o->>'deadLetterQueue')::boolean, q.dead_letter_queue),
        dlq_after_max_retries = coalesce((o->>'dlqAfterMaxRetries')::boolean, q.dlq_after_max_retries),
        encryption_enabled = coalesce((o->>'encryptionEnabled')::boolean, q.encryption_enabled),
        dedup_window_seconds = coalesce((o->>'dedupWindowSeconds')::integer, q.dedup_window_seconds),
        updated_at = now()
     WHERE q.id = v_id;
    RETURN QUERY
        -- A shard that does not host the queue's Default partition leaves it to the one that does.
        SELECT q.id, CASE WHEN queen.partition_hosted(q.name, 'Default') THEN queen.ensure_partition(q.id, 'Default') END,
               queen.queue_options(q)
          FROM queen.queues q WHERE q.id = v_id;
END;
$$;
COMMENT ON FUNCTION queen.configure(text, text, text, jsonb) IS
  'Creates or reconfigures a queue (whole option set replaced) and its Default partition.';

-- queen.catalog_queues(names, limit): the first logical shard's database keeps a row of every
-- queue named while a broker enforces QUEEN_TENANT_MAX_QUEUES (its catalog), so a tenant's
-- queues are counted in one place: a proxy calls this, with the broker's limit, before a
-- request that may create queues. A new name past its tenant's limit is refused (QN429) by the
-- queues trigger, as on one database; p_limit 0 records the names without a limit (a spool
-- drain, whose pushes were answered). How many names were new.
CREATE OR REPLACE FUNCTION queen.catalog_queues(p_names text[], p_limit bigint)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_name text;
    v_new  integer := 0;
BEGIN
    -- The trigger reads the limit from this setting, for this transaction only.
    PERFORM set_config('queen.tenant_max_queues', coalesce(p_limit, 0)::text, true);
    FOR v_name IN
        SELECT DISTINCT n FROM unnest(p_names) AS n
         WHERE n IS NOT NULL AND NOT EXISTS (SELECT 1 FROM queen.queues q WHERE q.name = n)
         ORDER BY n
    LOOP
        PERFORM queen.ensure_queue(v_name);
        v_new := v_new + 1;
    END LOOP;
    RETURN v_new;
END;
$$;
COMMENT ON FUNCTION queen.catalog_queues(text[], bigint) IS
  'Records queue names in the catalog shard under a per-tenant limit (QN429 past it); how many were new.';
