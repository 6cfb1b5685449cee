-- The proxy's hand-written consumer-group functions (route `custom` in 20_generator.sql):
-- each shard holds the cursors of its partitions and, once the group popped there, its
-- subscription record; these merge the shards' answers into the one-database answer.

-- queen_proxy.register_everywhere(queue, group, subscribe_all, subscription_at): registers a
-- popping group on every shard (consumer-group registrations live on every shard), at most
-- once a minute per (queue, group); the subscription start every shard is given, which the
-- pop passes on, so every shard starts the group at the same moment.
CREATE OR REPLACE FUNCTION queen_proxy.register_everywhere(p_queue text, p_group text, p_subscribe_all boolean,
                                                           p_subscription_at timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql
AS $$
DECLARE
    v_at timestamptz := coalesce(p_subscription_at, now());
BEGIN
    IF p_queue IS NULL OR p_group IS NULL
       OR EXISTS (SELECT 1 FROM queen_proxy.registered_groups r
                   WHERE r.queue_name = p_queue AND r.consumer_group = p_group
                     AND r.checked_at > now() - interval '1 minute') THEN
        RETURN v_at;
    END IF;
    BEGIN
        PERFORM queen_proxy.register_group_on_all(p_queue, p_group, CASE WHEN p_subscribe_all THEN NULL ELSE v_at END,
                                                  CASE WHEN p_subscription_at IS NULL AND NOT p_subscribe_all
                                                       THEN v_at END);
    EXCEPTION WHEN OTHERS THEN
        -- A database that cannot be reached (down, switching over) fails the refresh of a group
        -- registered everywhere before: its pops of the other databases go on, and the refresh
        -- is tried again in a minute. A group never registered waits for every database.
        UPDATE queen_proxy.registered_groups r SET checked_at = now()
         WHERE r.queue_name = p_queue AND r.consumer_group = p_group;
        IF NOT FOUND THEN
            RAISE;
        END IF;
        RETURN v_at;
    END;
    INSERT INTO queen_proxy.registered_groups (queue_name, consumer_group) VALUES (p_queue, p_group)
    ON CONFLICT (queue_name, consumer_group) DO UPDATE SET checked_at = now();
    RETURN v_at;
END;
$$;

-- queen.seek_group: one partition's seek on its shard; a queue's seek on every shard. 'ok'
-- when any shard moved a cursor (the counts added up), else the shards' own refusal.
CREATE OR REPLACE FUNCTION queen.seek_group(
    p_queue text, p_group text, p_partition text, p_to_end boolean, p_at timestamptz)
RETURNS TABLE(status text, partitions_updated integer, newest_at timestamptz)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    IF p_partition IS NOT NULL THEN
        RETURN QUERY SELECT * FROM queen_proxy.seek_group(queen.partition_hash(p_queue, p_partition), p_queue, p_group,
                                                          p_partition, p_to_end, p_at);
        RETURN;
    END IF;
    RETURN QUERY
        SELECT CASE WHEN bool_or(s.status = 'ok') THEN 'ok' ELSE min(s.status) END,
               coalesce(sum(s.partitions_updated) FILTER (WHERE s.status = 'ok'), 0)::integer,
               max(s.newest_at)
          FROM queen_proxy.seek_group_on_all(p_queue, p_group, p_partition, p_to_end, p_at) AS s;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.seek_group(text, text, text, boolean, timestamptz) IS
  'Proxy: a partition''s seek on its shard, a queue''s on every shard, answers merged.';

-- queen.delete_group: on every shard; one row per queue, the shards' counts added up. A deleted
-- registration leaves the proxy's cache too, so the next pop registers the group everywhere.
CREATE OR REPLACE FUNCTION queen.delete_group(p_group text, p_queue text, p_delete_metadata boolean,
                                              p_scope text DEFAULT NULL)
RETURNS TABLE(queue_name text, deleted_partitions integer, metadata_deleted boolean)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    IF p_delete_metadata THEN
        DELETE FROM queen_proxy.registered_groups r
         WHERE r.consumer_group = p_group AND (p_queue IS NULL OR r.queue_name = p_queue);
    END IF;
    RETURN QUERY
        SELECT d.queue_name, sum(d.deleted_partitions)::integer, bool_or(d.metadata_deleted)
          FROM queen_proxy.delete_group_on_all(p_group, p_queue, p_delete_metadata, p_scope) AS d
         GROUP BY d.queue_name
         ORDER BY d.queue_name COLLATE "C";
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.delete_group(text, text, boolean, text) IS
  'Proxy: a group deleted on every shard; one row per queue, counts added up.';

-- queen.list_group_summaries: one row per (group, queue), the shards' figures combined: counts
-- and lag added up, the oldest wait and the largest time lag kept, the earliest registration.
CREATE OR REPLACE FUNCTION queen.list_group_summaries(p_scope text DEFAULT NULL)
RETURNS TABLE(consumer_group text, queue_name text, cursors bigint, partitions_with_lag bigint, lag bigint,
              oldest_waiting_at timestamptz, max_time_lag bigint, committed bigint, subscription_mode text,
              subscription_at timestamptz, registered_at timestamptz, members bigint)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        SELECT g.consumer_group, g.queue_name, sum(g.cursors)::bigint, sum(g.partitions_with_lag)::bigint,
               sum(g.lag)::bigint, min(g.oldest_waiting_at), max(g.max_time_lag), sum(g.committed)::bigint,
               min(g.subscription_mode), min(g.subscription_at), min(g.registered_at), sum(g.members)::bigint
          FROM queen_proxy.list_group_summaries_every(p_scope) AS g
         GROUP BY g.consumer_group, g.queue_name
         ORDER BY g.consumer_group COLLATE "C", g.queue_name COLLATE "C";
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.list_group_summaries(text) IS
  'Proxy: group summaries of every shard combined per (group, queue).';

-- queen.group_cursors: every shard's cursors, in the one-database order; a (group, queue)
-- registered without cursors shows once, and only when no shard has a cursor for it.
CREATE OR REPLACE FUNCTION queen.group_cursors(p_group text, p_scope text DEFAULT NULL)
RETURNS TABLE(consumer_group text, queue_name text, registered boolean, subscription_at timestamptz,
              partition_id bigint, partition_name text, committed bigint, last_offset bigint,
              lease_id uuid, lease_end bigint, lease_expires_at timestamptz, attempts integer,
              retry_at timestamptz, last_claimed_at timestamptz, pending_since timestamptz,
              committed_at timestamptz, consumed boolean)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        WITH rows AS (SELECT * FROM queen_proxy.group_cursors_every(p_group, p_scope))
        SELECT u.* FROM (
            SELECT r.* FROM rows r WHERE r.partition_id IS NOT NULL
            UNION ALL
            SELECT DISTINCT ON (r.consumer_group, r.queue_name) r.*
              FROM rows r
             WHERE r.partition_id IS NULL
               AND NOT EXISTS (SELECT 1 FROM rows c WHERE c.partition_id IS NOT NULL
                                  AND c.consumer_group = r.consumer_group AND c.queue_name = r.queue_name)) u
        ORDER BY u.consumer_group COLLATE "C", u.queue_name COLLATE "C", u.partition_name COLLATE "C";
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.group_cursors(text, text) IS
  'Proxy: every shard''s cursors of a group (or all groups), a registration without cursors once.';
