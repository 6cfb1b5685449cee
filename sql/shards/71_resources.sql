-- The proxy's hand-written listings (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/71_resources.sql). A queue's
-- configuration is on every shard it was configured or pushed to, each shard with its own
-- queue id and its share of the partitions and counts: queues are merged by name (the
-- smallest id and the earliest creation shown), counts added up.

-- queen_proxy.merged_queues(namespace, task, scope): every matching queue once, merged over
-- the shards, newest first.
CREATE OR REPLACE FUNCTION queen_proxy.merged_queues(p_namespace text, p_task text, p_scope text)
RETURNS TABLE(id bigint, name text, namespace text, task text, created_at timestamptz, partitions bigint,
              total bigint, pending bigint, processing bigint, completed bigint, dead_letter bigint)
LANGUAGE sql
AS $$
    SELECT min(q.id), q.name, min(q.namespace), min(q.task), min(q.created_at), sum(q.partitions)::bigint,
           sum(q.total)::bigint, sum(q.pending)::bigint, sum(q.processing)::bigint, sum(q.completed)::bigint,
           sum(q.dead_letter)::bigint
      FROM queen_proxy.list_queues_every(p_namespace, p_task, NULL, 0, p_scope) AS q
     GROUP BY q.name
$$;
COMMENT ON FUNCTION queen_proxy.merged_queues IS
  'Every matching queue once, merged over the shards, newest first.';

-- queen.list_queues: one page of the merged queues, newest first; total_count every match.
CREATE OR REPLACE FUNCTION queen.list_queues(p_namespace text, p_task text, p_limit integer, p_offset integer,
                                             p_scope text DEFAULT NULL)
RETURNS TABLE(id bigint, name text, namespace text, task text, created_at timestamptz, partitions bigint,
              total bigint, pending bigint, processing bigint, completed bigint, dead_letter bigint,
              total_count bigint)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        SELECT m.*, count(*) OVER ()
          FROM queen_proxy.merged_queues(p_namespace, p_task, p_scope) AS m
         ORDER BY m.created_at DESC, m.name COLLATE "C"
         LIMIT p_limit OFFSET p_offset;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.list_queues(text, text, integer, integer, text) IS
  'Proxy: queues merged over the shards by name, newest first, one page.';

-- queen.list_groupings: per namespace or task, from the merged queues.
CREATE OR REPLACE FUNCTION queen.list_groupings(p_kind text, p_scope text DEFAULT NULL)
RETURNS TABLE(name text, queues bigint, partitions bigint, total bigint, pending bigint)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    PERFORM queen.check_grouping_kind(p_kind);
    RETURN QUERY
        SELECT k.v, count(*)::bigint, sum(k.partitions)::bigint, sum(k.total)::bigint, sum(k.pending)::bigint
          FROM (SELECT CASE WHEN p_kind = 'namespace' THEN m.namespace ELSE m.task END AS v, m.partitions, m.total,
                       m.pending
                  FROM queen_proxy.merged_queues(NULL, NULL, p_scope) AS m) k
         WHERE k.v IS NOT NULL AND k.v <> ''
         GROUP BY k.v
         ORDER BY k.v COLLATE "C";
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.list_groupings(text, text) IS
  'Proxy: per namespace or task, queues, partitions, total and pending over the merged queues.';

-- queen.queue_detail: the queue and every shard's partitions of it, by name; a queue without
-- partitions anywhere gives one row whose partition fields are NULL, an unknown queue none.
CREATE OR REPLACE FUNCTION queen.queue_detail(p_queue text)
RETURNS TABLE(queue_id bigint, queue_name text, namespace text, task text, queue_created_at timestamptz,
              partition_id bigint, partition_name text, created_at timestamptz, total bigint, pending bigint,
              processing bigint, completed bigint, dead_letter bigint, newest_at timestamptz,
              oldest_waiting_at timestamptz)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        WITH rows AS (SELECT * FROM queen_proxy.queue_detail_every(p_queue)),
             queue AS (SELECT min(r.queue_id) AS id, min(r.queue_created_at) AS created_at FROM rows r)
        SELECT q.id, r.queue_name, r.namespace, r.task, q.created_at, r.partition_id, r.partition_name, r.created_at,
               r.total, r.pending, r.processing, r.completed, r.dead_letter, r.newest_at, r.oldest_waiting_at
          FROM (SELECT * FROM rows WHERE partition_id IS NOT NULL
                UNION ALL
                (SELECT * FROM rows WHERE NOT EXISTS (SELECT 1 FROM rows WHERE partition_id IS NOT NULL) LIMIT 1)) r,
               queue q
         ORDER BY r.partition_name COLLATE "C";
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.queue_detail(text) IS
  'Proxy: a queue and every shard''s partitions of it, by name.';
