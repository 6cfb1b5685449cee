-- The proxy's hand-written dead-letter functions (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/75_dead_letter_admin.sql): a
-- dead letter lives on the shard of its partition, and its id carries that logical shard
-- (queen.dead_letter_id_with_shard), so ids are distinct across shards.

-- queen.list_dead_letters: a page of every shard's dead letters, newest failure first: each
-- shard gives its first offset + limit, the proxy orders them and cuts the page.
CREATE OR REPLACE FUNCTION queen.list_dead_letters(
    p_queue text DEFAULT NULL, p_group text DEFAULT NULL, p_partition text DEFAULT NULL,
    p_from timestamptz DEFAULT NULL, p_to timestamptz DEFAULT NULL, p_message_id uuid DEFAULT NULL,
    p_limit integer DEFAULT 100, p_offset integer DEFAULT 0,
    p_scope text DEFAULT NULL)
RETURNS TABLE(dead_letter_id bigint, message_id uuid, queue text, partition text, partition_id bigint,
              msg_offset bigint, consumer_group text, transaction_id text, trace_id uuid, producer_sub text,
              payload text, segment bytea, segment_first_offset bigint, error_message text, attempts integer,
              reason text, created_at timestamptz, failed_at timestamptz)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        SELECT l.* FROM queen_proxy.list_dead_letters_every(p_queue, p_group, p_partition, p_from, p_to, p_message_id,
                                                            p_limit + p_offset, 0, p_scope) AS l
         ORDER BY l.failed_at DESC, l.dead_letter_id DESC
         LIMIT p_limit OFFSET p_offset;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.list_dead_letters(text, text, text, timestamptz, timestamptz, uuid, integer, integer, text) IS
  'Proxy: a page of every shard''s matching dead letters, newest failure first.';

-- queen_proxy.dead_letter_quota(filter, limit): the shard databases (each by one logical shard
-- it hosts) and how many of the matching dead letters each gives to a call with that limit:
-- together the oldest `limit` failures of all shards. Without a limit, every shard database
-- with no quota.
CREATE OR REPLACE FUNCTION queen_proxy.dead_letter_quota(
    p_queue text, p_group text, p_partition text, p_from timestamptz, p_to timestamptz, p_message_id uuid,
    p_limit integer, p_scope text)
RETURNS TABLE(shard integer, quota integer)
LANGUAGE sql
AS $$
    SELECT s.shard, NULL::integer FROM unnest(queen_proxy.database_shards()) AS s(shard) WHERE p_limit IS NULL
    UNION ALL
    SELECT min(d.logical_shard), count(*)::integer
      FROM (SELECT f.dead_letter_id
              FROM queen_proxy.dead_letter_failures_every(p_queue, p_group, p_partition, p_from, p_to, p_message_id,
                                                          p_limit, p_scope) AS f
             WHERE p_limit IS NOT NULL
             ORDER BY f.failed_at, f.dead_letter_id
             LIMIT p_limit) chosen
      JOIN queen.shard_databases() d ON d.logical_shard = (chosen.dead_letter_id & (queen_proxy.logical_shards() - 1))
     GROUP BY d.conninfo
$$;
COMMENT ON FUNCTION queen_proxy.dead_letter_quota IS
  'The shard databases (each by one logical shard it hosts) and how many of the matching dead letters each gives to a call with that limit: together the oldest `limit` failures of all shards.';

-- queen.dead_letter_segments: each shard's share of the oldest `limit`, concatenated.
CREATE OR REPLACE FUNCTION queen.dead_letter_segments(
    p_queue text DEFAULT NULL, p_group text DEFAULT NULL, p_partition text DEFAULT NULL,
    p_from timestamptz DEFAULT NULL, p_to timestamptz DEFAULT NULL, p_message_id uuid DEFAULT NULL,
    p_limit integer DEFAULT NULL,
    p_scope text DEFAULT NULL)
RETURNS TABLE(dead_letter_id bigint, msg_offset bigint, segment_first_offset bigint, segment bytea)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    q record;
BEGIN
    FOR q IN SELECT * FROM queen_proxy.dead_letter_quota(p_queue, p_group, p_partition, p_from, p_to, p_message_id,
                                                         p_limit, p_scope) LOOP
        RETURN QUERY SELECT * FROM queen_proxy.dead_letter_segments(q.shard, p_queue, p_group, p_partition, p_from,
                                                                    p_to, p_message_id, q.quota, p_scope);
    END LOOP;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.dead_letter_segments(text, text, text, timestamptz, timestamptz, uuid, integer, text) IS
  'Proxy: the segment copies of each shard''s share of the oldest matching dead letters.';

-- queen.requeue_dead_letter_set: each shard requeues its share of the oldest `limit` (every
-- matching one without a limit) in its own transaction; the decoded frames go to every shard,
-- each taking those whose ids are its own.
CREATE OR REPLACE FUNCTION queen.requeue_dead_letter_set(
    p_queue text DEFAULT NULL, p_group text DEFAULT NULL, p_partition text DEFAULT NULL,
    p_from timestamptz DEFAULT NULL, p_to timestamptz DEFAULT NULL, p_message_id uuid DEFAULT NULL,
    p_all boolean DEFAULT false, p_limit integer DEFAULT NULL,
    p_decoded_ids bigint[] DEFAULT '{}', p_decoded_txids text[] DEFAULT '{}',
    p_decoded_trace_ids uuid[] DEFAULT '{}', p_decoded_producers text[] DEFAULT '{}',
    p_decoded_payloads text[] DEFAULT '{}',
    p_scope text DEFAULT NULL)
RETURNS TABLE(dead_letter_id bigint, status text, queue_name text, partition_name text, partition_id bigint,
              msg_offset bigint, message_id uuid, previous_id uuid, transaction_id text, consumer_group text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    q record;
BEGIN
    PERFORM queen.check_requeue_filter(p_queue, p_group, p_partition, p_from, p_to, p_message_id, p_all, p_limit);
    FOR q IN SELECT * FROM queen_proxy.dead_letter_quota(p_queue, p_group, p_partition, p_from, p_to, p_message_id,
                                                         p_limit, p_scope) LOOP
        RETURN QUERY SELECT * FROM queen_proxy.requeue_dead_letter_set(
            q.shard, p_queue, p_group, p_partition, p_from, p_to, p_message_id, p_all, q.quota, p_decoded_ids,
            p_decoded_txids, p_decoded_trace_ids, p_decoded_producers, p_decoded_payloads, p_scope);
    END LOOP;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.requeue_dead_letter_set(text, text, text, timestamptz, timestamptz, uuid, boolean, integer,
                                                  bigint[], text[], uuid[], text[], text[], text) IS
  'Proxy: each shard requeues its share of the oldest matching dead letters, in its own transaction.';
