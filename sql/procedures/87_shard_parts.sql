-- A database as one shard of a sharded deployment (docs/scaling.md): `queen shards init`
-- calls queen.become_shard on every shard, and the proxy's functions call the *_part
-- functions below with the share of a split call that lives here.
-- Lock order: as the functions they call (queen.push, queen.ack, queen.ack_fused).

-- queen.partition_shard(queue, partition): the logical shard of a partition on this shard,
-- NULL when this database is not a shard.
CREATE OR REPLACE FUNCTION queen.partition_shard(p_queue text, p_partition text)
RETURNS integer
LANGUAGE sql STABLE
AS $$
    SELECT queen.partition_hash(p_queue, p_partition) & (si.logical_shards - 1) FROM queen.shard_identity si
$$;
COMMENT ON FUNCTION queen.partition_shard(text, text) IS
  'Logical shard of a (queue key, partition) on a shard; NULL on a database that is not a shard.';

-- queen.partition_hosted(queue, partition): whether this database holds that partition: every
-- partition on one database, only its hosted logical shards' on a shard.
CREATE OR REPLACE FUNCTION queen.partition_hosted(p_queue text, p_partition text)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT coalesce((SELECT queen.partition_shard(p_queue, p_partition) = ANY (si.hosted) FROM queen.shard_identity si),
                    true)
$$;
COMMENT ON FUNCTION queen.partition_hosted(text, text) IS
  'Whether this database holds the partition (always, unless it is a shard hosting other logical shards).';

-- queen.partition_id_with_shard(): BEFORE INSERT on queen.log_partitions of a shard. The id
-- drawn from the sequence becomes id * logical_shards + the partition's logical shard, so a
-- partition id names its shard (acks, seeks and traces route by id, with no lookup). A
-- partition of a logical shard this database does not host is refused (QN409): a call was
-- routed to the wrong shard, and storing it here would hide it from every reader. A move's
-- import (88_shard_moves.sql) inserts partitions with the ids they have.
CREATE OR REPLACE FUNCTION queen.partition_id_with_shard()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_identity queen.shard_identity;
    v_queue    text;
    v_shard    integer;
BEGIN
    SELECT * INTO v_identity FROM queen.shard_identity;
    IF NOT FOUND OR current_setting('queen.shard_move', true) = 'on' THEN  -- a move's import keeps its ids
        RETURN NEW;
    END IF;
    SELECT name INTO v_queue FROM queen.queues WHERE id = NEW.queue_id;
    v_shard := queen.partition_hash(v_queue, NEW.name) & (v_identity.logical_shards - 1);
    IF v_shard <> ALL (v_identity.hosted) THEN
        RAISE EXCEPTION 'partition % of queue % belongs to logical shard %, which this database does not host',
              NEW.name, queen.queue_local_name(v_queue), v_shard USING ERRCODE = 'QN409';
    END IF;
    NEW.id := NEW.id * v_identity.logical_shards + v_shard;
    RETURN NEW;
END;
$$;
COMMENT ON FUNCTION queen.partition_id_with_shard() IS
  'Trigger of a shard: a new partition id carries its logical shard in its low bits; other shards'' refused.';

-- queen.dead_letter_id_with_shard(): BEFORE INSERT on queen.dead_letters of a shard: the id
-- carries its partition's logical shard in its low bits, as partition ids do, so dead-letter
-- ids are distinct across shards and name their shard.
CREATE OR REPLACE FUNCTION queen.dead_letter_id_with_shard()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_n integer;
BEGIN
    SELECT logical_shards INTO v_n FROM queen.shard_identity;
    IF v_n IS NOT NULL AND current_setting('queen.shard_move', true) IS DISTINCT FROM 'on' THEN
        NEW.id := NEW.id * v_n + (NEW.partition_id & (v_n - 1));
    END IF;
    RETURN NEW;
END;
$$;
COMMENT ON FUNCTION queen.dead_letter_id_with_shard() IS
  'Trigger of a shard: a new dead-letter id carries its partition''s logical shard in its low bits.';

-- queen.stream_query_id_by_name(): BEFORE INSERT on queen.stream_queries of a shard: the
-- query id is derived from its name (md5 as a UUID), so every shard registering the query
-- through the proxy gives it the same id.
CREATE OR REPLACE FUNCTION queen.stream_query_id_by_name()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM queen.shard_identity) THEN
        NEW.id := md5('queen stream query ' || NEW.name)::uuid;
    END IF;
    RETURN NEW;
END;
$$;
COMMENT ON FUNCTION queen.stream_query_id_by_name() IS
  'Trigger of a shard: a stream query''s id derived from its name, alike on every shard.';

-- queen.dead_letter_failures(filter, limit): the matching dead letters' failure times and ids,
-- oldest failure first, at most p_limit: what a requeue with that limit would take here. The
-- proxy merges every shard's to share a limit out (sql/shards/50_dead_letters.sql).
CREATE OR REPLACE FUNCTION queen.dead_letter_failures(
    p_queue text DEFAULT NULL, p_group text DEFAULT NULL, p_partition text DEFAULT NULL,
    p_from timestamptz DEFAULT NULL, p_to timestamptz DEFAULT NULL, p_message_id uuid DEFAULT NULL,
    p_limit integer DEFAULT NULL, p_scope text DEFAULT NULL)
RETURNS TABLE(failed_at timestamptz, dead_letter_id bigint)
LANGUAGE sql STABLE
AS $$
    SELECT m.failed_at, m.id
      FROM queen.dead_letters_matching(p_queue, p_group, p_partition, p_from, p_to, p_message_id, p_scope) m
     ORDER BY m.failed_at, m.id
     LIMIT p_limit
$$;
COMMENT ON FUNCTION queen.dead_letter_failures(text, text, text, timestamptz, timestamptz, uuid, integer, text) IS
  'Failure times and ids of the matching dead letters, oldest first, at most p_limit.';

-- queen.become_shard(logical_shards, hosted): makes this database a shard hosting those
-- logical shards (idempotent; the hosted list is replaced), whose new partition and
-- dead-letter ids carry their logical shard, whose lease ids name its hosted shards and
-- whose stream query ids follow their names. Refused (QN409) when it is already
-- a shard with another count, or when it holds partitions from before, whose ids would not
-- name their shard.
CREATE OR REPLACE FUNCTION queen.become_shard(p_logical_shards integer, p_hosted integer[])
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_now integer;
BEGIN
    LOCK TABLE queen.shard_identity IN EXCLUSIVE MODE;
    SELECT logical_shards INTO v_now FROM queen.shard_identity;
    IF v_now IS NOT NULL AND v_now <> p_logical_shards THEN
        RAISE EXCEPTION 'this database is already a shard of % logical shards, not %', v_now, p_logical_shards
              USING ERRCODE = 'QN409';
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(p_hosted) AS h WHERE h IS NULL OR h < 0 OR h >= p_logical_shards) THEN
        RAISE EXCEPTION 'hosted logical shards must lie in 0..%', p_logical_shards - 1 USING ERRCODE = 'QN400';
    END IF;
    IF v_now IS NULL THEN
        IF EXISTS (SELECT 1 FROM queen.log_partitions) THEN
            RAISE EXCEPTION 'this database already holds partitions; a shard must start empty'
                  USING ERRCODE = 'QN409';
        END IF;
        INSERT INTO queen.shard_identity (logical_shards, hosted) VALUES (p_logical_shards, p_hosted);
    ELSE
        UPDATE queen.shard_identity SET hosted = p_hosted;
    END IF;
    -- New sessions' lease ids name the hosted shards (54_lease_ids.sql); this one's too.
    EXECUTE format('ALTER DATABASE %I SET queen.lease_shards = %L', current_database(),
                   queen.lease_shard_mask(p_hosted));
    PERFORM set_config('queen.lease_shards', queen.lease_shard_mask(p_hosted), false);
    CREATE OR REPLACE TRIGGER partition_id_with_shard BEFORE INSERT ON queen.log_partitions
        FOR EACH ROW EXECUTE FUNCTION queen.partition_id_with_shard();
    CREATE OR REPLACE TRIGGER dead_letter_id_with_shard BEFORE INSERT ON queen.dead_letters
        FOR EACH ROW EXECUTE FUNCTION queen.dead_letter_id_with_shard();
    CREATE OR REPLACE TRIGGER stream_query_id_by_name BEFORE INSERT ON queen.stream_queries
        FOR EACH ROW EXECUTE FUNCTION queen.stream_query_id_by_name();
    RETURN p_logical_shards;
END;
$$;
COMMENT ON FUNCTION queen.become_shard(integer, integer[]) IS
  'Makes this database a shard hosting those logical shards (partition ids carry their shard).';

-- queen.api_signatures(names): how each named queen.* function is declared here, for the
-- proxy's generator (sql/shards/20_generator.sql), which gives its functions the same.
CREATE OR REPLACE FUNCTION queen.api_signatures(p_names text[])
RETURNS TABLE(name text, arguments text, argument_names text[], result text, returns_set boolean,
              returns_table boolean)
LANGUAGE sql STABLE
AS $$
    SELECT p.proname::text, pg_get_function_arguments(p.oid),
           (SELECT array_agg(a.n ORDER BY a.i)
              FROM unnest(p.proargnames, coalesce(p.proargmodes, array_fill('i'::"char", ARRAY[p.pronargs])))
                   WITH ORDINALITY AS a(n, m, i)
             WHERE a.m IN ('i', 'b', 'v')),
           pg_get_function_result(p.oid), p.proretset, pg_get_function_result(p.oid) LIKE 'TABLE(%'
      FROM pg_proc p
     WHERE p.pronamespace = 'queen'::regnamespace AND p.proname = ANY (p_names)
$$;
COMMENT ON FUNCTION queen.api_signatures(text[]) IS
  'Declared arguments and results of the named queen.* functions (the shard proxy copies them).';

-- queen.push_part_keys(queues, partitions): the (queue, partition) keys of a split push's
-- items (one key per item, equal keys adjacent) as queen.push takes them: keys and counts.
CREATE OR REPLACE FUNCTION queen.push_part_keys(p_queues text[], p_partitions text[],
                                                OUT queues text[], OUT partitions text[], OUT counts integer[])
LANGUAGE sql IMMUTABLE
AS $$
    SELECT array_agg(k.queue ORDER BY k.run), array_agg(k.part ORDER BY k.run), array_agg(k.n ORDER BY k.run)
      FROM (SELECT r.run, min(r.queue) AS queue, min(r.part) AS part, count(*)::integer AS n
              FROM (SELECT s.queue, s.part, sum(s.starts) OVER (ORDER BY s.i) AS run
                      FROM (SELECT u.i, u.queue, u.part,
                                   CASE WHEN (u.queue, u.part) IS NOT DISTINCT FROM
                                             (lag(u.queue) OVER w, lag(u.part) OVER w) THEN 0 ELSE 1 END AS starts
                              FROM unnest(p_queues, p_partitions) WITH ORDINALITY AS u(queue, part, i)
                            WINDOW w AS (ORDER BY u.i)) s) r
             GROUP BY r.run) k
$$;
COMMENT ON FUNCTION queen.push_part_keys(text[], text[]) IS
  'Keys and counts (queen.push''s form) of items given one key each, equal keys adjacent.';

-- queen.push_part: queen.push over this shard's share of a split push, one queue and
-- partition per item (in the request's order, so equal keys stay adjacent); item answers the
-- position in the whole call (p_items). Items of queues without a dedup window are recognised
-- by their receipt (queen.shard_receipts) when a retry brings them again: answered
-- 'duplicate' with the stored partition and offset, and not stored twice. Lock order: an
-- advisory lock per such key in hash order, then queen.push's.
CREATE OR REPLACE FUNCTION queen.push_part(
    p_shards integer[], p_items integer[], p_queues text[], p_partitions text[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[])
RETURNS TABLE(item integer, status text, partition_id bigint, msg_offset bigint, created_at timestamptz)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    k          record;
    v_receipts boolean;     -- some item's queue keeps no dedup window
    v_dup_i    integer[];   -- items recognised by their receipt, with the stored place
    v_dup_pid  bigint[];
    v_dup_off  bigint[];
    v_keep     integer[];   -- items to store
    v_receipt  boolean[];   -- per kept item: its queue keeps no dedup window
    r_item     integer[];
    r_status   text[];
    r_pid      bigint[];
    r_off      bigint[];
    r_at       timestamptz[];
BEGIN
    SELECT coalesce(bool_or(q.dedup_window_seconds = 0), false) INTO v_receipts
      FROM unnest(p_queues) AS u(queue) JOIN queen.queues q ON q.name = u.queue;
    IF NOT v_receipts THEN
        SELECT * INTO k FROM queen.push_part_keys(p_queues, p_partitions);
        RETURN QUERY
            SELECT p_items[r.item], r.status, r.partition_id, r.msg_offset, r.created_at
              FROM queen.push(k.queues, k.partitions, k.counts, p_txids, p_trace_ids, p_producers, p_payloads) AS r;
        RETURN;
    END IF;
    -- One advisory lock per unwindowed key, in hash order, before any row lock.
    PERFORM pg_advisory_xact_lock(h.hash)
       FROM (SELECT DISTINCT queen.partition_hash(u.queue, u.part) AS hash
               FROM unnest(p_queues, p_partitions) AS u(queue, part)
               JOIN queen.queues q ON q.name = u.queue AND q.dedup_window_seconds = 0) h
      ORDER BY h.hash;
    SELECT array_agg(u.i ORDER BY u.i), array_agg(sr.partition_id ORDER BY u.i), array_agg(sr.msg_offset ORDER BY u.i)
      INTO v_dup_i, v_dup_pid, v_dup_off
      FROM unnest(p_queues, p_partitions, p_txids) WITH ORDINALITY AS u(queue, part, txid, i)
      JOIN queen.queues q ON q.name = u.queue AND q.dedup_window_seconds = 0
      JOIN queen.shard_receipts sr
        ON sr.queue_name = u.queue AND sr.partition_name = u.part AND sr.transaction_id = u.txid;
    SELECT array_agg(u.i ORDER BY u.i), array_agg(coalesce(q.dedup_window_seconds = 0, false) ORDER BY u.i)
      INTO v_keep, v_receipt
      FROM unnest(p_queues) WITH ORDINALITY AS u(queue, i)
      LEFT JOIN queen.queues q ON q.name = u.queue
     WHERE u.i <> ALL (coalesce(v_dup_i, '{}'));
    IF v_dup_i IS NOT NULL THEN
        RETURN QUERY
            SELECT p_items[d.i], 'duplicate'::text, d.pid, d.off, NULL::timestamptz
              FROM unnest(v_dup_i, v_dup_pid, v_dup_off) AS d(i, pid, off);
    END IF;
    IF v_keep IS NULL THEN
        RETURN;
    END IF;
    SELECT * INTO k FROM queen.push_part_keys(ARRAY(SELECT p_queues[i] FROM unnest(v_keep) AS i),
                                              ARRAY(SELECT p_partitions[i] FROM unnest(v_keep) AS i));
    SELECT array_agg(v_keep[r.item] ORDER BY r.item), array_agg(r.status ORDER BY r.item),
           array_agg(r.partition_id ORDER BY r.item), array_agg(r.msg_offset ORDER BY r.item),
           array_agg(r.created_at ORDER BY r.item)
      INTO r_item, r_status, r_pid, r_off, r_at
      FROM queen.push(k.queues, k.partitions, k.counts,
                      ARRAY(SELECT p_txids[i] FROM unnest(v_keep) AS i),
                      ARRAY(SELECT p_trace_ids[i] FROM unnest(v_keep) AS i),
                      ARRAY(SELECT p_producers[i] FROM unnest(v_keep) AS i),
                      ARRAY(SELECT p_payloads[i] FROM unnest(v_keep) AS i)) AS r;
    INSERT INTO queen.shard_receipts (queue_name, partition_name, transaction_id, partition_id, msg_offset)
        SELECT p_queues[s.i], p_partitions[s.i], p_txids[s.i], s.pid, s.off
          FROM unnest(r_item, r_status, r_pid, r_off) AS s(i, st, pid, off)
          JOIN unnest(v_keep, v_receipt) AS w(i, receipt) ON w.i = s.i
         WHERE s.st = 'queued' AND w.receipt
        ON CONFLICT DO NOTHING;
    RETURN QUERY
        SELECT p_items[s.i], s.st, s.pid, s.off, s.at FROM unnest(r_item, r_status, r_pid, r_off, r_at) AS s(i, st, pid, off, at);
END;
$$;
COMMENT ON FUNCTION queen.push_part(integer[], integer[], text[], text[], text[], uuid[], text[], text[]) IS
  'queen.push over one shard''s share of a split push; items numbered as in the whole call; retries recognised.';

-- queen.expire_shard_receipts(batch): removes up to `batch` receipts older than ten minutes
-- (a client's retry comes within seconds); how many it removed. Housekeeping calls it.
CREATE OR REPLACE FUNCTION queen.expire_shard_receipts(p_batch integer)
RETURNS bigint
LANGUAGE sql
AS $$
    WITH gone AS (
        DELETE FROM queen.shard_receipts sr
         WHERE (sr.queue_name, sr.partition_name, sr.transaction_id) IN (
               SELECT o.queue_name, o.partition_name, o.transaction_id FROM queen.shard_receipts o
                WHERE o.created_at < now() - interval '10 minutes' LIMIT p_batch)
        RETURNING 1)
    SELECT count(*) FROM gone
$$;
COMMENT ON FUNCTION queen.expire_shard_receipts(integer) IS
  'Removes shard push receipts older than ten minutes (at most p_batch); returns how many.';

-- queen.push_spooled_part: queen.push_spooled over this shard's share of a split drain.
CREATE OR REPLACE FUNCTION queen.push_spooled_part(
    p_shards integer[], p_items integer[], p_queues text[], p_partitions text[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[], p_probe_since timestamptz[])
RETURNS TABLE(item integer, status text, partition_id bigint, msg_offset bigint, created_at timestamptz)
LANGUAGE plpgsql
AS $$
DECLARE
    k record;
BEGIN
    SELECT * INTO k FROM queen.push_part_keys(p_queues, p_partitions);
    RETURN QUERY
        SELECT p_items[r.item], r.status, r.partition_id, r.msg_offset, r.created_at
          FROM queen.push_spooled(k.queues, k.partitions, k.counts, p_txids, p_trace_ids, p_producers, p_payloads,
                                  p_probe_since) AS r;
END;
$$;
COMMENT ON FUNCTION queen.push_spooled_part(integer[], integer[], text[], text[], text[], uuid[], text[], text[],
                                            timestamptz[]) IS
  'queen.push_spooled over one shard''s share of a split drain; items numbered as in the whole call.';

-- queen.ack_part: queen.ack over this shard's share of a split ack call.
CREATE OR REPLACE FUNCTION queen.ack_part(
    p_shards integer[], p_items integer[], p_group text, p_partition_ids bigint[], p_txids text[],
    p_offsets bigint[], p_lease_ids uuid[], p_statuses text[], p_errors text[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
LANGUAGE sql
AS $$
    SELECT p_items[a.item], a.success, a.msg_offset, a.noop, a.dlq, a.lease_released, a.error, a.queue_name
      FROM queen.ack(p_group, p_partition_ids, p_txids, p_offsets, p_lease_ids, p_statuses, p_errors) AS a
$$;
COMMENT ON FUNCTION queen.ack_part(integer[], integer[], text, bigint[], text[], bigint[], uuid[], text[], text[]) IS
  'queen.ack over one shard''s share of a split ack; items numbered as in the whole call.';

-- queen.ack_fused_part: queen.ack_fused over this shard's share of a split fused ack.
CREATE OR REPLACE FUNCTION queen.ack_fused_part(
    p_shards integer[], p_items integer[], p_group text, p_requests integer[], p_partition_ids bigint[],
    p_txids text[], p_offsets bigint[], p_lease_ids uuid[], p_statuses text[], p_errors text[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
LANGUAGE sql
AS $$
    SELECT p_items[a.item], a.success, a.msg_offset, a.noop, a.dlq, a.lease_released, a.error, a.queue_name
      FROM queen.ack_fused(p_group, p_requests, p_partition_ids, p_txids, p_offsets, p_lease_ids, p_statuses,
                           p_errors) AS a
$$;
COMMENT ON FUNCTION queen.ack_fused_part(integer[], integer[], text, integer[], bigint[], text[], bigint[], uuid[],
                                         text[], text[]) IS
  'queen.ack_fused over one shard''s share of a split fused ack; items numbered as in the whole call.';

-- queen.shard_status(): this shard's share, for `queen shards status` (through the proxy).
-- Messages are those the segments hold (retention removes whole segments).
CREATE OR REPLACE FUNCTION queen.shard_status()
RETURNS TABLE(database text, port integer, logical_shards integer, partitions bigint, messages bigint, bytes bigint)
LANGUAGE sql STABLE
AS $$
    SELECT current_database()::text, inet_server_port(), (SELECT logical_shards FROM queen.shard_identity),
           (SELECT count(*) FROM queen.log_partitions),
           (SELECT coalesce(sum(s.last_offset - s.first_offset + 1), 0)::bigint FROM queen.log_segments s),
           pg_database_size(current_database())
$$;
COMMENT ON FUNCTION queen.shard_status() IS
  'This shard database''s partitions, stored messages and size (queen shards status).';

-- queen.scoped_partition_ids_part: queen.scoped_partition_ids over this shard's share of the
-- ids, each answered with its position in the whole call.
CREATE OR REPLACE FUNCTION queen.scoped_partition_ids_part(p_shards integer[], p_items integer[], p_ids bigint[],
                                                           p_scope text)
RETURNS TABLE(item integer, partition_id bigint)
LANGUAGE sql STABLE
AS $$
    SELECT p_items[u.i], u.id
      FROM unnest(queen.scoped_partition_ids(p_ids, p_scope)) WITH ORDINALITY AS u(id, i)
$$;
COMMENT ON FUNCTION queen.scoped_partition_ids_part(integer[], integer[], bigint[], text) IS
  'queen.scoped_partition_ids over one shard''s share of the ids; positions as in the whole call.';

-- queen.partition_groups(ids): the consumer groups with a cursor on any of these partitions.
CREATE OR REPLACE FUNCTION queen.partition_groups(p_partition_ids bigint[])
RETURNS TABLE(consumer_group text)
LANGUAGE sql STABLE
AS $$
    SELECT DISTINCT c.consumer_group FROM queen.log_consumers c WHERE c.partition_id = ANY (p_partition_ids)
$$;
COMMENT ON FUNCTION queen.partition_groups(bigint[]) IS
  'Distinct consumer groups with a cursor on any of the partitions (the proxy''s browse_mode).';

-- queen.tenant_queue_names(): every queue's tenant ('' for none) and stored key, so a proxy
-- can count a tenant's queues once however many shards hold them.
CREATE OR REPLACE FUNCTION queen.tenant_queue_names()
RETURNS TABLE(tenant text, queue_name text)
LANGUAGE sql STABLE
AS $$ SELECT coalesce(q.tenant, ''), q.name FROM queen.queues q $$;
COMMENT ON FUNCTION queen.tenant_queue_names() IS
  'Each queue''s tenant ('''' for none) and stored key (the shard proxy''s tenant_usage).';

-- queen.shard_ready_at(queue, group): where a proxy's queue-wide pop looks first. This
-- database's first logical shard and the ready_at of the group's first cursor on the queue
-- without a live lease or a pending retry (NULL: none), read in the claim index's order; the
-- claim rules past that (delays, windows) are the pop's own.
CREATE OR REPLACE FUNCTION queen.shard_ready_at(p_queue text, p_group text)
RETURNS TABLE(logical_shard integer, ready_at timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT (SELECT si.hosted[1] FROM queen.shard_identity si),
           (SELECT c.ready_at FROM queen.log_consumers c
             WHERE c.queue_id = (SELECT q.id FROM queen.queues q WHERE q.name = p_queue)
               AND c.consumer_group = p_group AND c.ready_at IS NOT NULL
               AND (c.lease_id IS NULL OR c.lease_expires_at <= now())
               AND (c.retry_at IS NULL OR c.retry_at <= now())
             ORDER BY c.ready_at LIMIT 1)
$$;
COMMENT ON FUNCTION queen.shard_ready_at(text, text) IS
  'This shard database''s first logical shard and its oldest waiting message a group could claim on a queue.';

-- queen.pop_fused_part(leases, …queen.pop_fused's arguments): queen.pop_fused on this shard,
-- where a request given a lease id (p_leases, per request; NULL: its own) gets that lease
-- instead of a new one: a queue-wide pop served by several shards hands out one lease.
CREATE OR REPLACE FUNCTION queen.pop_fused_part(
    p_leases uuid[], p_queue text, p_group text, p_batches integer[], p_max_partitions integer[],
    p_auto_ack boolean, p_subscribe_all boolean, p_subscription_at timestamptz)
RETURNS TABLE(request integer, partition_id bigint, partition_name text, lease_id uuid, span_start bigint,
              span_end bigint, seg_first bigint, seg_codec smallint, seg_body bytea, skip_offsets bigint[],
              leases_expired integer, redelivered bigint, lease_dead_letters integer, expired_dead_letters bigint)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    x         record;
    v_renamed uuid[] := '{}';  -- the leases already given their request's id
BEGIN
    -- queen.pop_fused returns its whole answer before the first row is read (a plpgsql or C
    -- set-returning function materializes it), so renaming a lease here changes no claim.
    FOR x IN SELECT * FROM queen.pop_fused(p_queue, p_group, p_batches, p_max_partitions, p_auto_ack,
                                           p_subscribe_all, p_subscription_at) LOOP
        lease_id := x.lease_id;
        IF x.lease_id IS NOT NULL AND p_leases[x.request] IS NOT NULL THEN
            IF NOT x.lease_id = ANY (v_renamed) THEN
                UPDATE queen.log_consumers SET lease_id = p_leases[x.request] WHERE lease_id = x.lease_id;
                v_renamed := v_renamed || x.lease_id;
            END IF;
            lease_id := p_leases[x.request];
        END IF;
        request := x.request;
        partition_id := x.partition_id;
        partition_name := x.partition_name;
        span_start := x.span_start;
        span_end := x.span_end;
        seg_first := x.seg_first;
        seg_codec := x.seg_codec;
        seg_body := x.seg_body;
        skip_offsets := x.skip_offsets;
        leases_expired := x.leases_expired;
        redelivered := x.redelivered;
        lease_dead_letters := x.lease_dead_letters;
        expired_dead_letters := x.expired_dead_letters;
        RETURN NEXT;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION queen.pop_fused_part(uuid[], text, text, integer[], integer[], boolean, boolean, timestamptz) IS
  'queen.pop_fused on a shard, each request''s lease replaced by the one given for it (proxy pops over shards).';

-- queen.register_group_from(queue, group, start, registered_at): queen.register_group, where a
-- registration this call creates records registered_at (when given) as its creation time: a
-- proxy registers a group subscribed from "now" on every shard with its own now, so each shard
-- lists it as subscribed from its registration ('new'), as one database does.
CREATE OR REPLACE FUNCTION queen.register_group_from(p_queue text, p_group text, p_start timestamptz,
                                                     p_registered_at timestamptz)
RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM queen.register_group(p_queue, p_group, p_start);
    IF p_registered_at IS NOT NULL THEN
        UPDATE queen.consumer_groups g SET created_at = p_registered_at
         WHERE g.queue_name = p_queue AND g.consumer_group = p_group
           AND g.created_at = now();  -- inserted by this transaction
    END IF;
END;
$$;
COMMENT ON FUNCTION queen.register_group_from(text, text, timestamptz, timestamptz) IS
  'queen.register_group, a registration it creates dated registered_at when given (registrations by a proxy).';

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

-- queen.extend_lease_part(shards, …queen.extend_lease's arguments): queen.extend_lease on
-- this database; p_shards (the logical shards the proxy sent here) only routes the call.
CREATE OR REPLACE FUNCTION queen.extend_lease_part(p_shards integer[], p_lease_id uuid, p_seconds integer,
                                                   p_scope text DEFAULT NULL)
RETURNS TABLE(status text, expires_at timestamptz, partitions integer)
LANGUAGE sql
AS $$ SELECT * FROM queen.extend_lease(p_lease_id, p_seconds, p_scope) $$;
COMMENT ON FUNCTION queen.extend_lease_part(integer[], uuid, integer, text) IS
  'queen.extend_lease on this shard (the proxy''s call routed by the shards a lease id names).';

-- queen.release_lease_part(shards, lease id, group): queen.release_lease on this database, as
-- one row; p_shards only routes the proxy's call.
CREATE OR REPLACE FUNCTION queen.release_lease_part(p_shards integer[], p_lease_id uuid, p_group text)
RETURNS TABLE(released integer)
LANGUAGE sql
AS $$ SELECT queen.release_lease(p_lease_id, p_group) $$;
COMMENT ON FUNCTION queen.release_lease_part(integer[], uuid, text) IS
  'queen.release_lease on this shard (the proxy''s call routed by the shards a lease id names).';
