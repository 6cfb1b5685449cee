-- Argument rules a shard proxy checks before it fans a call out, one definition for the
-- proxy and the shards: queen.list_groupings (71_resources.sql) and
-- queen.requeue_dead_letter_set (75_dead_letter_admin.sql), and the proxy's bodies of both
-- (sql/shards/71_resources.sql, 75_dead_letter_admin.sql).
-- Applied to a shard proxy too.
-- Lock order: none; these only read their arguments.

-- queen.check_grouping_kind(kind): refuses (22023) a grouping other than namespace or task.
CREATE OR REPLACE FUNCTION queen.check_grouping_kind(p_kind text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF p_kind NOT IN ('namespace', 'task') THEN
        RAISE EXCEPTION 'list_groupings: kind must be namespace or task, got %', p_kind USING ERRCODE = '22023';
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.check_grouping_kind(text) IS
  'Refuses (22023) a grouping kind other than namespace or task.';

-- queen.check_requeue_filter(filter, all, limit): refuses (22023) a requeue of dead letters
-- with no filter unless p_all says every one, or a limit below 1.
CREATE OR REPLACE FUNCTION queen.check_requeue_filter(
    p_queue text, p_group text, p_partition text, p_from timestamptz, p_to timestamptz, p_message_id uuid,
    p_all boolean, p_limit integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF NOT coalesce(p_all, false) AND p_queue IS NULL AND p_group IS NULL AND p_partition IS NULL
       AND p_from IS NULL AND p_to IS NULL AND p_message_id IS NULL THEN
        RAISE EXCEPTION 'requeue_dead_letters: no filter given; pass p_all => true to requeue every dead letter'
            USING ERRCODE = '22023';
    END IF;
    IF p_limit IS NOT NULL AND p_limit < 1 THEN
        RAISE EXCEPTION 'requeue_dead_letters: p_limit must be at least 1' USING ERRCODE = '22023';
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.check_requeue_filter(text, text, text, timestamptz, timestamptz, uuid, boolean, integer) IS
  'Refuses (22023) a dead-letter requeue without a filter (unless p_all) or with a limit below 1.';
