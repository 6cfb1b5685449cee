-- Message traces (migration 0008, docs/traces.md).
-- queen.record_trace(partition, transaction id, group, event type, data, names) -> uuid:
--   stores one trace event and returns its id, or NULL when the partition does not exist
--   (nothing stored). group NULL/'' is stored as '__QUEUE_MODE__', event type NULL as
--   'info', names NULL as '{}' (duplicates and order of names are kept as given).
--   Not checked against stored messages: a trace may name a message that retention has
--   removed. Reads the partition row without locking it, so tracing never waits for pushes.
-- queen.message_traces_of(partition, transaction id) -> that message's traces in time
--   order (created_at, then insertion order).
-- queen.traces_by_name(name, limit, offset) -> the traces carrying that name, in time
--   order, with queue and partition names (NULL once the partition is gone);
--   queen.count_traces_by_name(name) -> how many.
-- queen.trace_names(limit, offset) -> distinct trace names with trace and message counts,
--   most recently seen first; queen.count_trace_names() -> how many.
-- queen.message_traces_partition_deleted(): AFTER DELETE trigger on queen.log_partitions
--   that removes the partition's traces (deleting a queue removes its traces).

CREATE OR REPLACE FUNCTION queen.record_trace(
    p_partition_id bigint, p_transaction_id text, p_consumer_group text, p_event_type text,
    p_data jsonb, p_trace_names text[])
RETURNS uuid
LANGUAGE plpgsql
AS $$
DECLARE
    v_id uuid;
BEGIN
    IF p_transaction_id IS NULL OR p_transaction_id = '' THEN
        RAISE EXCEPTION 'record_trace: transaction id is required' USING ERRCODE = '22023';
    END IF;
    IF p_data IS NULL THEN
        RAISE EXCEPTION 'record_trace: data is required (JSON null is ''null''::jsonb)' USING ERRCODE = '22023';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM queen.log_partitions p WHERE p.id = p_partition_id) THEN
        RETURN NULL;
    END IF;
    INSERT INTO queen.message_traces (partition_id, transaction_id, consumer_group, event_type, data, trace_names)
    VALUES (p_partition_id, p_transaction_id, coalesce(nullif(p_consumer_group, ''), '__QUEUE_MODE__'),
            coalesce(p_event_type, 'info'), p_data, coalesce(p_trace_names, '{}'))
    RETURNING id INTO v_id;
    RETURN v_id;
END;
$$;
COMMENT ON FUNCTION queen.record_trace(bigint, text, text, text, jsonb, text[]) IS
  'Stores one trace event of the message (partition, transaction id); NULL when the partition does not exist.';

CREATE OR REPLACE FUNCTION queen.message_traces_of(p_partition_id bigint, p_transaction_id text)
RETURNS TABLE(trace_id uuid, partition_id bigint, transaction_id text, consumer_group text, event_type text,
              data jsonb, trace_names text[], created_at timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT t.id, t.partition_id, t.transaction_id, t.consumer_group, t.event_type, t.data, t.trace_names,
           t.created_at
      FROM queen.message_traces t
     WHERE t.partition_id = p_partition_id AND t.transaction_id = p_transaction_id
     ORDER BY t.created_at, t.seq
$$;
COMMENT ON FUNCTION queen.message_traces_of(bigint, text) IS
  'The traces of one message, in time order.';

-- The listings by name take the tenant scope (sql/procedures/21_tenancy.sql) as a new trailing
-- parameter: only traces of its queues' partitions are listed and counted. Drop the forms
-- without it.
DROP FUNCTION IF EXISTS queen.traces_by_name(text, integer, integer);
DROP FUNCTION IF EXISTS queen.count_traces_by_name(text);
DROP FUNCTION IF EXISTS queen.trace_names(integer, integer);
DROP FUNCTION IF EXISTS queen.count_trace_names();

CREATE OR REPLACE FUNCTION queen.traces_by_name(p_name text, p_limit integer DEFAULT 100, p_offset integer DEFAULT 0,
                                                p_scope text DEFAULT NULL)
RETURNS TABLE(trace_id uuid, partition_id bigint, transaction_id text, consumer_group text, event_type text,
              data jsonb, trace_names text[], created_at timestamptz, queue text, partition text)
LANGUAGE sql STABLE
AS $$
    SELECT t.id, t.partition_id, t.transaction_id, t.consumer_group, t.event_type, t.data, t.trace_names,
           t.created_at, q.name, p.name
      FROM (SELECT tr.* FROM queen.message_traces tr
             WHERE tr.trace_names @> ARRAY[p_name] AND queen.partition_in_scope(tr.partition_id, p_scope)
             ORDER BY tr.created_at, tr.seq
             LIMIT p_limit OFFSET p_offset) t
      LEFT JOIN queen.log_partitions p ON p.id = t.partition_id
      LEFT JOIN queen.queues q ON q.id = p.queue_id
     ORDER BY t.created_at, t.seq
$$;
COMMENT ON FUNCTION queen.traces_by_name(text, integer, integer, text) IS
  'A page of the traces carrying a name, in time order, with queue and partition names.';

CREATE OR REPLACE FUNCTION queen.count_traces_by_name(p_name text, p_scope text DEFAULT NULL)
RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT count(*) FROM queen.message_traces t
     WHERE t.trace_names @> ARRAY[p_name] AND queen.partition_in_scope(t.partition_id, p_scope)
$$;
COMMENT ON FUNCTION queen.count_traces_by_name(text, text) IS 'Number of traces carrying a name.';

CREATE OR REPLACE FUNCTION queen.trace_names(p_limit integer DEFAULT 50, p_offset integer DEFAULT 0,
                                             p_scope text DEFAULT NULL)
RETURNS TABLE(trace_name text, trace_count bigint, message_count bigint, last_seen timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT n.name, count(DISTINCT t.id), count(DISTINCT (t.partition_id, t.transaction_id)), max(t.created_at)
      FROM queen.message_traces t
     CROSS JOIN LATERAL unnest(t.trace_names) AS n(name)
     WHERE queen.partition_in_scope(t.partition_id, p_scope)
     GROUP BY n.name
     ORDER BY max(t.created_at) DESC, n.name COLLATE "C"
     LIMIT p_limit OFFSET p_offset
$$;
COMMENT ON FUNCTION queen.trace_names(integer, integer, text) IS
  'Distinct trace names with their trace and message counts, most recently seen first. Scans every trace.';

CREATE OR REPLACE FUNCTION queen.count_trace_names(p_scope text DEFAULT NULL)
RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT count(DISTINCT n.name) FROM queen.message_traces t CROSS JOIN LATERAL unnest(t.trace_names) AS n(name)
     WHERE queen.partition_in_scope(t.partition_id, p_scope)
$$;
COMMENT ON FUNCTION queen.count_trace_names(text) IS 'Number of distinct trace names.';

CREATE OR REPLACE FUNCTION queen.message_traces_partition_deleted()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    DELETE FROM queen.message_traces t WHERE t.partition_id = OLD.id;
    RETURN NULL;
END;
$$;
COMMENT ON FUNCTION queen.message_traces_partition_deleted() IS
  'AFTER DELETE trigger on queen.log_partitions: removes the deleted partition''s traces.';

CREATE OR REPLACE TRIGGER message_traces_partition_deleted
    AFTER DELETE ON queen.log_partitions
    FOR EACH ROW EXECUTE FUNCTION queen.message_traces_partition_deleted();
