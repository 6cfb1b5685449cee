-- The proxy's hand-written queue-wide pop (route `custom` in sql/operations.json; the shards'
-- own bodies: sql/procedures/56_pop_fused.sql):
-- the shard databases looked at in turn, oldest waiting message first.

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
COMMENT ON FUNCTION queen_proxy.ready_order IS
  'The shard databases (one logical shard of each) in the order a queue-wide pop visits them: oldest claimable waiting message first, as one database''s claim orders its partitions.';

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
COMMENT ON FUNCTION queen_proxy.reachable_ready_order IS
  'queen_proxy.ready_order when the one call to every database failed (one is down or switching over): each database asked on its own, those that cannot answer left out, so that the others'' messages are served meanwhile (a parked long-poll asks again at its next re-check).';

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
