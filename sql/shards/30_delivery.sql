-- The proxy's hand-written delivery functions (route `custom` in 20_generator.sql): the
-- shards' signatures, bodies that split a call by shard or look at shard databases in turn
-- through the generated queen_proxy.* functions.

-- queen_proxy.unavailable(sqlstate, message): whether a failure is a shard database's absence
-- for a while (it cannot be reached, or it was lost during the call, or the logical shard is
-- being moved: QNMOV) rather than an answer: the same call may succeed later.
CREATE OR REPLACE FUNCTION queen_proxy.unavailable(p_sqlstate text, p_message text)
RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    SELECT p_sqlstate LIKE '08%' OR p_sqlstate IN ('57P01', '57P02', '57P03', 'QNMOV')
           OR (p_sqlstate = 'XX000' AND p_message LIKE 'PL/Proxy function %')
$$;

-- queen_proxy.reraise(sqlstate, message): raises again an error met calling the shards, as
-- the broker must see it. A shard PL/Proxy could not reach, or lost mid-call, becomes QN503
-- naming the shard's database (the broker answers 503; a push's retry with the same
-- transaction ids stores each item once). A shard's own error keeps its SQLSTATE, without the
-- "function(n): [database] REMOTE ERROR: " PL/Proxy puts before its message.
CREATE OR REPLACE FUNCTION queen_proxy.reraise(p_sqlstate text, p_message text)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_database text := substring(p_message FROM '^\S+\(\d+\): \[([^]]+)\]');
BEGIN
    IF p_sqlstate <> 'QNMOV' AND queen_proxy.unavailable(p_sqlstate, p_message) THEN
        RAISE EXCEPTION 'shard database % is unavailable; retry with the same transaction ids',
              coalesce(v_database, substring(p_message FROM '\[([^]]+)\]'), '(unknown)')
              USING ERRCODE = 'QN503';
    END IF;
    RAISE EXCEPTION USING ERRCODE = p_sqlstate,
                          MESSAGE = regexp_replace(p_message, '^\S+\(\d+\): \[[^]]+\] REMOTE \S+: ', '');
END;
$$;

-- queen_proxy.item_keys(queues, partitions, counts): a push's (queue, partition) keys as one
-- key per item, with each item's hash and position: what a split push sends. Refused (22004,
-- 22023, as queen.push refuses them) when the key arrays are missing or do not add up to the
-- items. No row for a push without items.
CREATE OR REPLACE FUNCTION queen_proxy.item_keys(p_queues text[], p_partitions text[], p_counts integer[],
                                                 p_items integer)
RETURNS TABLE(hashes integer[], items integer[], queues text[], partitions text[])
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_queues IS NULL OR p_partitions IS NULL OR p_counts IS NULL OR p_items IS NULL THEN
        RAISE EXCEPTION 'push: queues, partitions, counts, transaction ids and payloads must not be NULL'
              USING ERRCODE = '22004';
    END IF;
    IF cardinality(p_queues) <> cardinality(p_partitions) OR cardinality(p_queues) <> cardinality(p_counts)
       OR EXISTS (SELECT 1 FROM unnest(p_counts) AS c WHERE c IS NULL OR c < 0)
       OR (SELECT coalesce(sum(c), 0) FROM unnest(p_counts) AS c) <> p_items THEN
        RAISE EXCEPTION 'push: item arrays do not match the key counts' USING ERRCODE = '22023';
    END IF;
    IF p_items = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT array_agg(queen.partition_hash(e.queue, e.part) ORDER BY e.i), array_agg(e.i::integer ORDER BY e.i),
               array_agg(e.queue ORDER BY e.i), array_agg(e.part ORDER BY e.i)
          FROM (SELECT k.queue, k.part, row_number() OVER (ORDER BY k.ord, g.n) AS i
                  FROM unnest(p_queues, p_partitions, p_counts) WITH ORDINALITY AS k(queue, part, cnt, ord)
                 CROSS JOIN LATERAL generate_series(1, k.cnt) AS g(n)) e;
END;
$$;

-- queen.push: every item to the shard of its (queue, partition) in one PL/Proxy call; each
-- shard stores its share in one transaction (atomic per shard, docs/scaling.md). One row per
-- item, in item order, numbered as queen.push numbers them.
CREATE OR REPLACE FUNCTION queen.push(
    p_queues text[], p_partitions text[], p_counts integer[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[])
RETURNS TABLE(item integer, status text, partition_id bigint, msg_offset bigint, created_at timestamptz)
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_payloads IS NULL THEN
        RAISE EXCEPTION 'push: queues, partitions, counts, transaction ids and payloads must not be NULL'
              USING ERRCODE = '22004';
    END IF;
    PERFORM queen_proxy.check_queue_limit(p_queues);
    RETURN QUERY
        SELECT r.item, r.status, r.partition_id, r.msg_offset, r.created_at
          FROM queen_proxy.item_keys(p_queues, p_partitions, p_counts, cardinality(p_txids)) AS k
         CROSS JOIN LATERAL queen_proxy.push_part(k.hashes, k.items, k.queues, k.partitions, p_txids, p_trace_ids,
                                                  p_producers, p_payloads) AS r
         ORDER BY r.item;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.push(text[], text[], integer[], text[], uuid[], text[], text[]) IS
  'Proxy: splits a push by shard in one call; atomic per shard; one row per item, in item order.';

-- queen.push_spooled: a spool drain's items split by shard in one call, as queen.push.
CREATE OR REPLACE FUNCTION queen.push_spooled(
    p_queues text[], p_partitions text[], p_counts integer[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[], p_probe_since timestamptz[])
RETURNS TABLE(item integer, status text, partition_id bigint, msg_offset bigint, created_at timestamptz)
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM queen_proxy.check_queue_limit(p_queues, true);
    RETURN QUERY
        SELECT r.item, r.status, r.partition_id, r.msg_offset, r.created_at
          FROM queen_proxy.item_keys(p_queues, p_partitions, p_counts, cardinality(p_txids)) AS k
         CROSS JOIN LATERAL queen_proxy.push_spooled_part(k.hashes, k.items, k.queues, k.partitions, p_txids,
                                                          p_trace_ids, p_producers, p_payloads, p_probe_since) AS r
         ORDER BY r.item;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.push_spooled(text[], text[], integer[], text[], uuid[], text[], text[], timestamptz[]) IS
  'Proxy: a spool drain split by shard in one call; one row per item, in item order.';

-- queen.pop: a partition's pop on its shard; a queue-wide pop is queen.pop_fused with one
-- request (below). The group is registered on every shard first, with one start.
CREATE OR REPLACE FUNCTION queen.pop(
    p_queue text, p_partition text, p_group text, p_batch integer, p_max_partitions integer,
    p_auto_ack boolean, p_subscribe_all boolean, p_subscription_at timestamptz)
RETURNS TABLE(partition_id bigint, partition_name text, lease_id uuid, span_start bigint,
              span_end bigint, seg_first bigint, seg_codec smallint, seg_body bytea, skip_offsets bigint[],
              leases_expired integer, redelivered bigint, lease_dead_letters integer, expired_dead_letters bigint)
LANGUAGE plpgsql
AS $$
DECLARE
    v_at timestamptz;
BEGIN
    v_at := queen_proxy.register_everywhere(p_queue, p_group, p_subscribe_all, p_subscription_at);
    IF p_partition IS NOT NULL THEN
        RETURN QUERY SELECT * FROM queen_proxy.pop(queen.partition_hash(p_queue, p_partition), p_queue, p_partition,
                                                   p_group, p_batch, p_max_partitions, p_auto_ack, p_subscribe_all,
                                                   v_at);
        RETURN;
    END IF;
    RETURN QUERY
        SELECT f.partition_id, f.partition_name, f.lease_id, f.span_start, f.span_end, f.seg_first, f.seg_codec,
               f.seg_body, f.skip_offsets, f.leases_expired, f.redelivered, f.lease_dead_letters,
               f.expired_dead_letters
          FROM queen.pop_fused(p_queue, p_group, ARRAY[p_batch], ARRAY[p_max_partitions], p_auto_ack,
                               p_subscribe_all, v_at) f;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.pop(text, text, text, integer, integer, boolean, boolean, timestamptz) IS
  'Proxy: a partition''s pop on its shard; a queue-wide pop is queen.pop_fused with one request.';

-- queen_proxy.ready_order(queue, group): the shard databases (one logical shard of each) in
-- the order a queue-wide pop visits them: oldest claimable waiting message first, as one
-- database's claim orders its partitions; databases with none known after, in a random order
-- (a new cursor may not have its ready_at yet, so they are still asked). Asking every database
-- costs each of them a query, so a proxy connection keeps the last (queue, group)'s order for
-- up to a second (the setting queen_proxy.ready_order): a database whose oldest message grew
-- oldest comes first within that second.
CREATE OR REPLACE FUNCTION queen_proxy.ready_order(p_queue text, p_group text)
RETURNS integer[]
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_key    text := md5(p_queue || chr(31) || p_group);
    v_cached text[] := string_to_array(current_setting('queen_proxy.ready_order', true), '|');
    v_order  integer[];
BEGIN
    IF cardinality(v_cached) = 3 AND v_cached[1] = v_key
       AND v_cached[2]::double precision > extract(epoch FROM clock_timestamp()) - 1 THEN
        RETURN v_cached[3]::integer[];
    END IF;
    BEGIN
        SELECT array_agg(r.logical_shard ORDER BY r.ready_at NULLS LAST, random()) INTO v_order
          FROM queen_proxy.shard_ready_at_every(p_queue, p_group) r;
    EXCEPTION WHEN OTHERS THEN
        v_order := queen_proxy.reachable_ready_order(p_queue, p_group);
    END;
    PERFORM set_config('queen_proxy.ready_order',
                       v_key || '|' || extract(epoch FROM clock_timestamp()) || '|' || v_order::text, false);
    RETURN v_order;
END;
$$;

-- queen_proxy.reachable_ready_order(queue, group): queen_proxy.ready_order when the one call to
-- every database failed (one is down or switching over): each database asked on its own, those
-- that cannot answer left out, so that the others' messages are served meanwhile (a parked
-- long-poll asks again at its next re-check). When none answers, the last failure is raised.
CREATE OR REPLACE FUNCTION queen_proxy.reachable_ready_order(p_queue text, p_group text)
RETURNS integer[]
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_shard   integer;
    v_ready   timestamptz;
    v_found   integer;
    v_order   integer[] := '{}';
    v_readies timestamptz[] := '{}';
    v_state   text;
    v_message text;
BEGIN
    FOREACH v_shard IN ARRAY queen_proxy.database_shards() LOOP
        BEGIN
            SELECT r.logical_shard, r.ready_at INTO v_found, v_ready
              FROM queen_proxy.shard_ready_at_on(v_shard, p_queue, p_group) r;
            v_order := v_order || v_shard;
            v_readies := v_readies || v_ready;
        EXCEPTION WHEN OTHERS THEN
            v_state := SQLSTATE;
            v_message := SQLERRM;
        END;
    END LOOP;
    IF cardinality(v_order) = 0 THEN
        PERFORM queen_proxy.reraise(v_state, v_message);
    END IF;
    RETURN ARRAY(SELECT o.shard FROM unnest(v_order, v_readies) AS o(shard, ready_at)
                  ORDER BY o.ready_at NULLS LAST, random());
END;
$$;

-- queen.pop_fused: the shard databases in queen_proxy.ready_order; each request takes from
-- each database in turn what its batch and partition count still allow, under one lease id
-- (the first database's, given to the others: queen.pop_fused_part). Each request's counts
-- rows are added up into one, last, as one database answers it.
CREATE OR REPLACE FUNCTION queen.pop_fused(
    p_queue text, p_group text, p_batches integer[], p_max_partitions integer[],
    p_auto_ack boolean, p_subscribe_all boolean, p_subscription_at timestamptz)
RETURNS TABLE(request integer, partition_id bigint, partition_name text, lease_id uuid, span_start bigint,
              span_end bigint, seg_first bigint, seg_codec smallint, seg_body bytea, skip_offsets bigint[],
              leases_expired integer, redelivered bigint, lease_dead_letters integer, expired_dead_letters bigint)
LANGUAGE plpgsql
AS $$
DECLARE
    n         integer := coalesce(cardinality(p_batches), 0);
    v_shard   integer;
    v_at      timestamptz;
    v_pending integer[];  -- requests with batch and partitions left, in request order
    v_left    integer[] := p_batches;
    v_slots   integer[] := p_max_partitions;
    v_lease   uuid[] := array_fill(NULL::uuid, ARRAY[greatest(n, 1)]);
    v_counted boolean[] := array_fill(false, ARRAY[greatest(n, 1)]);
    v_c1      integer[] := array_fill(0, ARRAY[greatest(n, 1)]);
    v_c2      bigint[] := array_fill(0::bigint, ARRAY[greatest(n, 1)]);
    v_c3      integer[] := array_fill(0, ARRAY[greatest(n, 1)]);
    v_c4      bigint[] := array_fill(0::bigint, ARRAY[greatest(n, 1)]);
    v_last    bigint;     -- the partition of the previous row (a span's rows are consecutive)
    v_req     integer;
    v_answered boolean := false;  -- some database answered
    v_state   text;               -- the last failure of a database that could not
    v_message text;
    x         record;
BEGIN
    v_at := queen_proxy.register_everywhere(p_queue, p_group, p_subscribe_all, p_subscription_at);
    FOREACH v_shard IN ARRAY queen_proxy.ready_order(p_queue, p_group) LOOP
        SELECT array_agg(i ORDER BY i) INTO v_pending
          FROM generate_series(1, n) AS i WHERE v_left[i] > 0 AND v_slots[i] > 0;
        EXIT WHEN v_pending IS NULL;
        v_last := NULL;
        -- A database that cannot answer now (down, switching over, its shard being moved) is
        -- left out of this pop; the others are served. PL/Proxy has every row of a call before
        -- the first is read, so a failure comes before this visit returned anything.
        BEGIN
            FOR x IN
                SELECT * FROM queen_proxy.pop_fused_part(
                    v_shard, ARRAY(SELECT v_lease[i] FROM unnest(v_pending) WITH ORDINALITY AS u(i, o) ORDER BY o),
                    p_queue, p_group,
                    ARRAY(SELECT v_left[i] FROM unnest(v_pending) WITH ORDINALITY AS u(i, o) ORDER BY o),
                    ARRAY(SELECT v_slots[i] FROM unnest(v_pending) WITH ORDINALITY AS u(i, o) ORDER BY o),
                    p_auto_ack, p_subscribe_all, v_at)
            LOOP
                v_req := v_pending[x.request];
                IF x.partition_id IS NULL THEN  -- a counts row
                    v_counted[v_req] := true;
                    v_c1[v_req] := v_c1[v_req] + coalesce(x.leases_expired, 0);
                    v_c2[v_req] := v_c2[v_req] + coalesce(x.redelivered, 0);
                    v_c3[v_req] := v_c3[v_req] + coalesce(x.lease_dead_letters, 0);
                    v_c4[v_req] := v_c4[v_req] + coalesce(x.expired_dead_letters, 0);
                    CONTINUE;
                END IF;
                IF v_lease[v_req] IS NULL THEN
                    v_lease[v_req] := x.lease_id;
                END IF;
                IF v_last IS DISTINCT FROM x.partition_id THEN  -- a new span: its partition and messages
                    v_last := x.partition_id;
                    v_slots[v_req] := v_slots[v_req] - 1;
                    v_left[v_req] := v_left[v_req] - (x.span_end - x.span_start)::integer
                                     + coalesce(cardinality(x.skip_offsets), 0);
                END IF;
                request := v_req;
                partition_id := x.partition_id;
                partition_name := x.partition_name;
                lease_id := x.lease_id;
                span_start := x.span_start;
                span_end := x.span_end;
                seg_first := x.seg_first;
                seg_codec := x.seg_codec;
                seg_body := x.seg_body;
                skip_offsets := x.skip_offsets;
                leases_expired := NULL;
                redelivered := NULL;
                lease_dead_letters := NULL;
                expired_dead_letters := NULL;
                RETURN NEXT;
            END LOOP;
            v_answered := true;
        EXCEPTION WHEN OTHERS THEN
            IF NOT queen_proxy.unavailable(SQLSTATE, SQLERRM) THEN
                RAISE;
            END IF;
            v_state := SQLSTATE;
            v_message := SQLERRM;
        END;
    END LOOP;
    IF NOT v_answered AND v_state IS NOT NULL THEN  -- no database could answer
        PERFORM queen_proxy.reraise(v_state, v_message);
    END IF;
    FOR v_req IN 1 .. n LOOP
        CONTINUE WHEN NOT v_counted[v_req];
        request := v_req;
        partition_id := NULL; partition_name := NULL; lease_id := NULL; span_start := NULL; span_end := NULL;
        seg_first := NULL; seg_codec := NULL; seg_body := NULL; skip_offsets := NULL;
        leases_expired := v_c1[v_req];
        redelivered := v_c2[v_req];
        lease_dead_letters := v_c3[v_req];
        expired_dead_letters := v_c4[v_req];
        RETURN NEXT;
    END LOOP;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.pop_fused(text, text, integer[], integer[], boolean, boolean, timestamptz) IS
  'Proxy: fused queue-wide pops over the shard databases, oldest waiting message first, one lease per request.';

-- queen_proxy.shards_of_ids(ids): the logical shard of each partition id (its low bits).
CREATE OR REPLACE FUNCTION queen_proxy.shards_of_ids(p_ids bigint[])
RETURNS integer[]
LANGUAGE sql IMMUTABLE
AS $$ SELECT array_agg((coalesce(i, 0) & 1023)::integer ORDER BY o) FROM unnest(p_ids) WITH ORDINALITY AS u(i, o) $$;

-- queen.ack: each ack to the shard its partition id names, in one PL/Proxy call.
CREATE OR REPLACE FUNCTION queen.ack(
    p_group text, p_partition_ids bigint[], p_txids text[], p_offsets bigint[],
    p_lease_ids uuid[], p_statuses text[], p_errors text[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
LANGUAGE plpgsql
AS $$
BEGIN
    IF coalesce(cardinality(p_partition_ids), 0) = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT a.* FROM queen_proxy.ack_part(queen_proxy.shards_of_ids(p_partition_ids),
                                             (SELECT array_agg(i ORDER BY i)
                                                FROM generate_series(1, cardinality(p_partition_ids)) AS i),
                                             p_group, p_partition_ids, p_txids, p_offsets, p_lease_ids, p_statuses,
                                             p_errors) AS a
         ORDER BY a.item;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.ack(text, bigint[], text[], bigint[], uuid[], text[], text[]) IS
  'Proxy: acks split by the shard their partition ids name, in one call; one row per ack, in order.';

-- queen.ack_fused: as queen.ack, for the ack fusion's call. A request whose acks name more
-- than one logical shard is left out (no row): the broker then sends it alone through
-- queen.ack, as it does with any request queen.ack_fused leaves.
CREATE OR REPLACE FUNCTION queen.ack_fused(
    p_group text, p_requests integer[], p_partition_ids bigint[], p_txids text[], p_offsets bigint[],
    p_lease_ids uuid[], p_statuses text[], p_errors text[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
LANGUAGE plpgsql
AS $$
DECLARE
    v_items integer[]; v_requests integer[]; v_ids bigint[]; v_txids text[]; v_offsets bigint[];
    v_leases uuid[]; v_statuses text[]; v_errors text[];
BEGIN
    WITH acks AS (
        SELECT u.* FROM unnest(p_requests, p_partition_ids, p_txids, p_offsets, p_lease_ids, p_statuses, p_errors)
                        WITH ORDINALITY AS u(request, pid, txid, off, lease, st, err, i)
    ), one_shard AS (
        SELECT a.request FROM acks a GROUP BY a.request HAVING count(DISTINCT coalesce(a.pid, 0) & 1023) = 1
    )
    SELECT array_agg(a.i::integer ORDER BY a.i), array_agg(a.request ORDER BY a.i), array_agg(a.pid ORDER BY a.i),
           array_agg(a.txid ORDER BY a.i), array_agg(a.off ORDER BY a.i), array_agg(a.lease ORDER BY a.i),
           array_agg(a.st ORDER BY a.i), array_agg(a.err ORDER BY a.i)
      INTO v_items, v_requests, v_ids, v_txids, v_offsets, v_leases, v_statuses, v_errors
      FROM acks a WHERE a.request IN (SELECT o.request FROM one_shard o);
    IF v_items IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT a.* FROM queen_proxy.ack_fused_part(queen_proxy.shards_of_ids(v_ids), v_items, p_group, v_requests, v_ids,
                                                   v_txids, v_offsets, v_leases, v_statuses, v_errors) AS a
         ORDER BY a.item;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.ack_fused(text, integer[], bigint[], text[], bigint[], uuid[], text[], text[]) IS
  'Proxy: fused acks split by shard in one call; a request spanning shards is left for its own queen.ack.';

-- queen_proxy.call_shard(logical shards): the one logical shard a call runs on, given every
-- logical shard it touches (0 when none); refused (QN409) when they live on more than one
-- shard database, since PL/Proxy has no atomicity across shards. `what` names the call.
CREATE OR REPLACE FUNCTION queen_proxy.call_shard(p_shards integer[], p_what text)
RETURNS integer
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_databases integer;
BEGIN
    SELECT count(DISTINCT d.conninfo) INTO v_databases
      FROM queen.shard_databases() d WHERE d.logical_shard = ANY (p_shards);
    IF v_databases > 1 THEN
        RAISE EXCEPTION '% spans % shard databases: its pushes and acks must name partitions of one shard '
                        '(the same partition name in every queue; docs/scaling.md)', p_what, v_databases
              USING ERRCODE = 'QN409';
    END IF;
    RETURN coalesce(p_shards[1], 0);
END;
$$;

-- queen_proxy.touched_shards(queues, partitions, partition ids): the logical shards of
-- pushed (queue, partition) keys and of acked partition ids.
CREATE OR REPLACE FUNCTION queen_proxy.touched_shards(p_queues text[], p_partitions text[], p_partition_ids bigint[])
RETURNS integer[]
LANGUAGE sql STABLE
AS $$
    SELECT array_agg(DISTINCT s.shard)
      FROM (SELECT queen.partition_hash(u.queue, u.part) & (queen_proxy.logical_shards() - 1) AS shard
              FROM unnest(p_queues, p_partitions) AS u(queue, part)
            UNION
            SELECT (i & (queen_proxy.logical_shards() - 1))::integer FROM unnest(p_partition_ids) AS i
             WHERE i IS NOT NULL) s
$$;

-- queen.transaction: one local transaction on the shard every push and ack lives on;
-- refused (QN409, nothing written) when they live on more than one.
CREATE OR REPLACE FUNCTION queen.transaction(
    p_queues text[], p_partitions text[], p_counts integer[],
    p_txids text[], p_trace_ids uuid[], p_producers text[], p_payloads text[],
    p_ack_groups text[], p_ack_partition_ids bigint[], p_ack_txids text[], p_ack_offsets bigint[],
    p_ack_lease_ids uuid[], p_ack_statuses text[], p_ack_errors text[],
    p_required_leases uuid[], p_scope text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM queen_proxy.check_queue_limit(p_queues);
    RETURN queen_proxy.transaction(
        queen_proxy.call_shard(queen_proxy.touched_shards(p_queues, p_partitions, p_ack_partition_ids),
                               'the transaction'),
        p_queues, p_partitions, p_counts, p_txids, p_trace_ids, p_producers, p_payloads, p_ack_groups,
        p_ack_partition_ids, p_ack_txids, p_ack_offsets, p_ack_lease_ids, p_ack_statuses, p_ack_errors,
        p_required_leases, p_scope);
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.transaction(text[], text[], integer[], text[], uuid[], text[], text[], text[], bigint[],
                                      text[], bigint[], uuid[], text[], text[], uuid[], text) IS
  'Proxy: a transaction on the one shard its pushes and acks live on; QN409 when they span shards.';

-- queen.scoped_partition_ids: each id checked against the tenant scope on its own shard, in
-- one call; without a scope the ids as they are (as on one database).
CREATE OR REPLACE FUNCTION queen.scoped_partition_ids(p_ids bigint[], p_scope text)
RETURNS bigint[]
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_scope IS NULL OR coalesce(cardinality(p_ids), 0) = 0 THEN
        RETURN p_ids;
    END IF;
    RETURN (SELECT array_agg(s.partition_id ORDER BY s.item)
              FROM queen_proxy.scoped_partition_ids_part(
                       queen_proxy.shards_of_ids(p_ids),
                       (SELECT array_agg(i ORDER BY i) FROM generate_series(1, cardinality(p_ids)) AS i),
                       p_ids, p_scope) AS s);
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.scoped_partition_ids(bigint[], text) IS
  'Proxy: each partition id checked against the tenant scope on its shard; 0 for one outside it.';

-- queen.browse_mode: queue mode present, and the distinct named groups, over every shard's
-- cursors of these partitions.
CREATE OR REPLACE FUNCTION queen.browse_mode(p_partition_ids bigint[])
RETURNS TABLE(has_queue_mode boolean, bus_groups_count integer)
LANGUAGE plpgsql
AS $$
BEGIN
    RETURN QUERY
        SELECT coalesce(bool_or(g.consumer_group = '__QUEUE_MODE__'), false),
               (count(DISTINCT g.consumer_group) FILTER (WHERE g.consumer_group <> '__QUEUE_MODE__'))::integer
          FROM queen_proxy.partition_groups_every(p_partition_ids) AS g;
EXCEPTION WHEN OTHERS THEN
    PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM);
END;
$$;
COMMENT ON FUNCTION queen.browse_mode(bigint[]) IS
  'Proxy: queue mode and distinct named groups over every shard''s cursors of the partitions.';
