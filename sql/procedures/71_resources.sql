-- The operator's listings (docs/operator-routes.md): queues, namespaces and tasks from the
-- newest stats snapshot (68_stats.sql), and one queue's partitions computed live (bounded by
-- that queue's partitions).

-- queen.snapshot_queue_counts(): per queue of the newest snapshot, its counts summed over pages.
CREATE OR REPLACE FUNCTION queen.snapshot_queue_counts()
RETURNS TABLE(queue_id bigint, partitions bigint, total bigint, pending bigint, processing bigint,
              completed bigint, dead_letter bigint, newest_at timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT s.queue_id, sum(s.partitions)::bigint, sum(s.total)::bigint, sum(s.pending)::bigint,
           sum(s.processing)::bigint, sum(s.completed)::bigint, sum(s.dead_letter)::bigint, max(s.newest_at)
      FROM queen.queue_stats s
     WHERE s.snapshot_id = queen.stats_snapshot_id()
     GROUP BY s.queue_id
$$;
COMMENT ON FUNCTION queen.snapshot_queue_counts() IS
  'Counts per queue from the newest stats snapshot.';

-- queen.list_queues(namespace, task, limit, offset, scope): the queues of the tenant scope
-- (sql/procedures/21_tenancy.sql; exact namespace and task filters when given), newest first,
-- with their snapshot counts (zero when the snapshot predates the queue), one page;
-- total_count is every match. Names are shown as the scope's tenant knows them.
DROP FUNCTION IF EXISTS queen.list_queues(text, text, integer, integer);
CREATE OR REPLACE FUNCTION queen.list_queues(p_namespace text, p_task text, p_limit integer, p_offset integer,
                                             p_scope text DEFAULT NULL)
RETURNS TABLE(id bigint, name text, namespace text, task text, created_at timestamptz, partitions bigint,
              total bigint, pending bigint, processing bigint, completed bigint, dead_letter bigint,
              total_count bigint)
LANGUAGE sql STABLE
AS $$
    SELECT q.id, queen.scoped_queue_name(q.name, p_scope), q.namespace, q.task, q.created_at,
           coalesce(c.partitions, 0), coalesce(c.total, 0),
           coalesce(c.pending, 0), coalesce(c.processing, 0), coalesce(c.completed, 0),
           coalesce(c.dead_letter, 0), count(*) OVER ()
      FROM queen.queues q
      LEFT JOIN queen.snapshot_queue_counts() c ON c.queue_id = q.id
     WHERE (p_namespace IS NULL OR q.namespace = p_namespace)
       AND (p_task IS NULL OR q.task = p_task)
       AND queen.in_tenant_scope(q.tenant, p_scope)
     ORDER BY q.created_at DESC, q.id DESC
     LIMIT p_limit OFFSET p_offset
$$;
COMMENT ON FUNCTION queen.list_queues(text, text, integer, integer, text) IS
  'Queues of a tenant scope newest first with their stats-snapshot counts, filtered and paged.';

-- queen.queue_detail(queue name): the queue's row fields and, one row each, its partitions by
-- name with their counts computed now (queen.partition_stats); a queue without partitions
-- gives one row whose partition fields are NULL, an unknown queue none.
CREATE OR REPLACE FUNCTION queen.queue_detail(p_queue text)
RETURNS TABLE(queue_id bigint, queue_name text, namespace text, task text, queue_created_at timestamptz,
              partition_id bigint, partition_name text, created_at timestamptz, total bigint, pending bigint,
              processing bigint, completed bigint, dead_letter bigint, newest_at timestamptz,
              oldest_waiting_at timestamptz)
LANGUAGE sql STABLE
-- The ordered scan of each cursor's key, newest version first (queen.partition_cursors): a
-- bitmap scan would visit every version a held snapshot keeps. One call per request, so the
-- plan this setting costs (no inlining) is made once per request.
SET enable_bitmapscan = off
AS $$
    SELECT q.id, q.name, q.namespace, q.task, q.created_at,
           p.id, p.name, p.created_at, s.total, s.pending, s.processing, s.completed, s.dead_letter,
           s.newest_at, s.oldest_waiting_at
      FROM queen.queues q
      LEFT JOIN queen.log_partitions p ON p.queue_id = q.id
      LEFT JOIN LATERAL queen.partition_stats(ARRAY[p.id]) s ON true
     WHERE q.name = p_queue
     ORDER BY p.name COLLATE "C"
$$;
COMMENT ON FUNCTION queen.queue_detail(text) IS
  'A queue and its partitions by name with their counts computed now.';

-- queen.list_groupings(kind, scope): 'namespace' or 'task': per distinct value among the
-- queues of the tenant scope (queues without one are not listed), its queues, partitions,
-- total and pending from the snapshot, by name.
DROP FUNCTION IF EXISTS queen.list_groupings(text);
CREATE OR REPLACE FUNCTION queen.list_groupings(p_kind text, p_scope text DEFAULT NULL)
RETURNS TABLE(name text, queues bigint, partitions bigint, total bigint, pending bigint)
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    PERFORM queen.check_grouping_kind(p_kind);
    RETURN QUERY
    SELECT k.v, count(*)::bigint, coalesce(sum(c.partitions), 0)::bigint, coalesce(sum(c.total), 0)::bigint,
           coalesce(sum(c.pending), 0)::bigint
      FROM (SELECT q.id, CASE WHEN p_kind = 'namespace' THEN q.namespace ELSE q.task END AS v
              FROM queen.queues q WHERE queen.in_tenant_scope(q.tenant, p_scope)) k
      LEFT JOIN queen.snapshot_queue_counts() c ON c.queue_id = k.id
     WHERE k.v IS NOT NULL AND k.v <> ''
     GROUP BY k.v
     ORDER BY k.v COLLATE "C";
END;
$$;
COMMENT ON FUNCTION queen.list_groupings(text, text) IS
  'Per namespace or task: queues, partitions, total and pending from the stats snapshot.';
