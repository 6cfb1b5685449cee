-- queen.pop_fused: several queue-wide pops of one consumer group in one call (the broker's pop
-- fusion, docs/architecture.md "Fused pops"); a queue-wide queen.pop is one request of it.
-- Inputs: queue, group, then one element per request in p_batches and p_max_partitions (each
--   >= 1); auto_ack and the subscription start, shared by every request, as in queen.pop.
-- Output: queen.pop's rows, each tagged with its request's 1-based position (request); a
--   request with no row has nothing to hand out. Each request gets exactly what queen.pop
--   would give it alone: its own lease id, at most its batch of messages over at most its
--   partitions, and its own counts row.
-- Claim: one walk of the group's claim index, under queen.pop's claim rules, hands the
--   claimable cursors out in claim order: request 1 takes cursors until their waiting messages
--   cover its batch or it has its partitions, then request 2, and so on. So the oldest waiting
--   messages go to the earliest request, and no partition is leased twice.
-- The common case costs a fixed number of statements for all requests together (spans, leases
--   and segment reads are set-based). When a claimed cursor needs a rule applied cursor by
--   cursor (a lease taken over, tombstones past it, maxWaitTimeSeconds or delayedProcessing), or
--   a request would need another claim round (retention removed what a cursor's count
--   promised), nothing is written and each request runs queen.pop_stepwise (55_pop.sql) in
--   turn, in this transaction: the cursors this call holds do not block it.
-- Paths: with queen_ext 1.4 installed the body runs in C (queen_ext.pop_fused, ext/pop_fused.c)
--   under this contract; the stock body below is the other path.

CREATE OR REPLACE FUNCTION queen.pop_fused(
    p_queue text, p_group text, p_batches integer[], p_max_partitions integer[],
    p_auto_ack boolean, p_subscribe_all boolean, p_subscription_at timestamptz)
RETURNS TABLE(request integer, partition_id bigint, partition_name text, lease_id uuid, span_start bigint,
              span_end bigint, seg_first bigint, seg_codec smallint, seg_body bytea, skip_offsets bigint[],
              leases_expired integer, redelivered bigint, lease_dead_letters integer, expired_dead_letters bigint)
LANGUAGE plpgsql
-- As queen.pop_stepwise: key lookups in index order, no JIT, generic plans (docs/architecture.md,
-- "Plans that stay right").
SET enable_seqscan = off
SET jit = off
SET enable_sort = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    q           record;
    c           record;
    v_n         integer := coalesce(cardinality(p_batches), 0);
    v_leases    uuid[];
    v_floor     timestamptz;
    v_slots     bigint := (SELECT sum(m) FROM unnest(p_max_partitions) AS m);
    v_claim     refcursor;
    v_req       integer := 1;
    v_cover     bigint := 0;   -- messages waiting on the cursors the request at hand took
    v_taken     integer := 0;  -- cursors the request at hand took
    v_again     boolean;       -- some request must claim another round
    -- The cursors claimed, in claim order (parallel arrays).
    a_req       integer[] := '{}';
    a_pid       bigint[] := '{}';
    a_committed bigint[] := '{}';
    a_lease     uuid[] := '{}';
    a_delivered bigint[] := '{}';
    a_last      bigint[] := '{}';
    a_tid       tid[] := '{}';
    a_name      text[] := '{}';
    a_cut       boolean[];     -- per request: its claim stopped on its cover count
    a_start     bigint[];
    a_fin       bigint[];
    v_registered boolean := false;
BEGIN
    -- With queen_ext 1.4 the same contract runs in C (ext/pop_fused.c).
    IF p_queue IS NOT NULL AND p_group IS NOT NULL
       AND to_regproc('queen_ext.pop_fused') IS NOT NULL THEN
        RETURN QUERY SELECT * FROM queen_ext.pop_fused(p_queue, p_group, p_batches, p_max_partitions, p_auto_ack,
                                                       p_subscribe_all, p_subscription_at);
        RETURN;
    END IF;
    IF v_n = 0 OR v_n <> coalesce(cardinality(p_max_partitions), 0) THEN
        RAISE EXCEPTION 'pop_fused: one batch and one partition count per request' USING ERRCODE = '22023';
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(p_batches, p_max_partitions) AS u(b, m) WHERE u.b IS NULL OR u.m IS NULL
                                                                             OR u.b < 1 OR u.m < 1) THEN
        PERFORM queen.refuse_pop_sizes();
    END IF;
    -- The queue, and whether the group's registration is current (the common case: one
    -- statement); when it is not, queen.register_group, then the queue read again.
    LOOP
        SELECT qu.id, qu.lease_time, qu.delayed_processing, qu.window_buffer, qu.max_wait_time_seconds,
               r.current AS registered INTO q
          FROM queen.queues qu CROSS JOIN queen.group_registration_current(p_queue, p_group) r
         WHERE qu.name = p_queue;
        EXIT WHEN v_registered OR coalesce(q.registered, false);
        PERFORM queen.register_group(p_queue, p_group,
            CASE WHEN p_subscribe_all THEN NULL ELSE coalesce(p_subscription_at, now()) END);
        v_registered := true;
    END LOOP;
    IF q.id IS NULL THEN
        RETURN;
    END IF;

    IF q.max_wait_time_seconds = 0 AND q.delayed_processing = 0 THEN
        v_floor := queen.claim_floor(q.id, p_group);
        a_cut := array_fill(false, ARRAY[v_n]);
        -- queen.pop_stepwise's claim query (55_pop.sql), for every request's partitions at once.
        OPEN v_claim NO SCROLL FOR
            SELECT lc.partition_id, lc.committed, lc.lease_id, lc.delivered_to, h.last_offset, lc.ctid AS tid,
                   (SELECT pt.name FROM queen.log_partitions pt WHERE pt.id = lc.partition_id) AS name
              FROM queen.log_consumers lc
             CROSS JOIN LATERAL queen.partition_head(lc.partition_id) h
             WHERE lc.queue_id = q.id
               AND lc.consumer_group = p_group
               AND lc.ready_at IS NOT NULL
               AND lc.ready_at >= v_floor
               AND h.last_offset > lc.committed
               AND (lc.lease_id IS NULL OR lc.lease_expires_at <= now())
               AND (lc.retry_at IS NULL OR lc.retry_at <= now())
               AND (q.window_buffer = 0 OR h.last_created_at <= now() - make_interval(secs => q.window_buffer))
             ORDER BY lc.ready_at, lc.partition_id
             LIMIT v_slots
               FOR UPDATE OF lc SKIP LOCKED;
        -- One row at a time, so the call does not lock cursors it will not hand out.
        LOOP
            FETCH v_claim INTO c;
            EXIT WHEN NOT FOUND;
            a_req := a_req || v_req;
            a_pid := a_pid || c.partition_id;
            a_committed := a_committed || c.committed;
            a_lease := a_lease || c.lease_id;
            a_delivered := a_delivered || c.delivered_to;
            a_last := a_last || c.last_offset;
            a_tid := a_tid || c.tid;
            a_name := a_name || c.name;
            v_cover := v_cover + (c.last_offset - c.committed);
            v_taken := v_taken + 1;
            IF v_cover >= p_batches[v_req] OR v_taken >= p_max_partitions[v_req] THEN
                a_cut[v_req] := v_taken < p_max_partitions[v_req];
                v_req := v_req + 1;
                v_cover := 0;
                v_taken := 0;
                EXIT WHEN v_req > v_n;
            END IF;
        END LOOP;
        CLOSE v_claim;
        IF cardinality(a_pid) = 0 THEN
            RETURN;  -- nothing claimable for any request
        END IF;

        IF cardinality(array_remove(a_lease, NULL)) = 0
           AND NOT EXISTS (SELECT 1 FROM unnest(a_pid, a_committed) AS u(pid, committed)
                            WHERE EXISTS (SELECT 1 FROM queen.message_tombstones t
                                           WHERE t.partition_id = u.pid AND t.msg_offset > u.committed)) THEN
            -- Each cursor's span: from its committed offset (or past the segments retention
            -- removed) through what is left of its request's batch after the cursors that request
            -- took before it.
            SELECT coalesce(array_agg(x.tid ORDER BY x.ord), '{}'), array_agg(x.req ORDER BY x.ord),
                   array_agg(x.pid ORDER BY x.ord), array_agg(x.name ORDER BY x.ord),
                   array_agg(x.start ORDER BY x.ord), array_agg(x.fin ORDER BY x.ord),
                   array_agg(x.delivered ORDER BY x.ord)
              INTO a_tid, a_req, a_pid, a_name, a_start, a_fin, a_delivered
              FROM (SELECT y.*, least(y.last, y.start + (p_batches[y.req] - y.before)) AS fin
                      FROM (SELECT z.*, coalesce(sum(z.last - z.start) OVER (PARTITION BY z.req ORDER BY z.ord
                                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)::bigint AS before
                              FROM (SELECT u.*, greatest(u.committed, coalesce(f.first_offset - 1, u.last)) AS start
                                      FROM unnest(a_tid, a_req, a_pid, a_name, a_committed, a_last, a_delivered)
                                           WITH ORDINALITY AS u(tid, req, pid, name, committed, last, delivered, ord)
                                      LEFT JOIN LATERAL (SELECT s.first_offset FROM queen.log_segments s
                                                          WHERE s.partition_id = u.pid AND s.last_offset > u.committed
                                                          ORDER BY s.last_offset LIMIT 1) f ON true) z) y
                     WHERE y.before < p_batches[y.req]) x;
            -- queen.pop_stepwise runs another round for a request whose claim stopped on its count while
            -- retention had removed some of what it counted; that is rare: leave it to queen.pop_stepwise.
            v_again := EXISTS (SELECT 1 FROM generate_series(1, v_n) AS r(i)
                                WHERE a_cut[r.i]
                                  AND coalesce((SELECT sum(greatest(u.fin - u.start, 0))
                                                  FROM unnest(a_req, a_start, a_fin) AS u(req, start, fin)
                                                 WHERE u.req = r.i), 0) < p_batches[r.i]);
            IF NOT v_again THEN
                v_leases := ARRAY(SELECT CASE WHEN p_auto_ack THEN NULL
                                              ELSE queen.new_lease_id(p_max_partitions[r.i]) END
                                    FROM generate_series(1, v_n) AS r(i));
                UPDATE queen.log_consumers lc
                   SET committed = u.done,
                       attempts = CASE WHEN lc.attempts_offset <= u.done THEN 0 ELSE lc.attempts END,
                       attempts_offset = CASE WHEN lc.attempts_offset <= u.done THEN 0 ELSE lc.attempts_offset END,
                       lease_id = CASE WHEN u.fin > u.start THEN v_leases[u.req] END,
                       lease_start = CASE WHEN u.fin > u.start AND NOT p_auto_ack THEN u.start END,
                       lease_end = CASE WHEN u.fin > u.start AND NOT p_auto_ack THEN u.fin END,
                       lease_expires_at = CASE WHEN u.fin > u.start AND NOT p_auto_ack
                                               THEN now() + make_interval(secs => q.lease_time) END,
                       lease_counted = false,
                       retry_at = CASE WHEN u.fin > u.start THEN NULL ELSE lc.retry_at END,
                       last_claimed_at = CASE WHEN u.fin > u.start THEN now() ELSE lc.last_claimed_at END,
                       delivered_to = CASE WHEN u.fin > u.start THEN greatest(lc.delivered_to, u.fin)
                                           ELSE lc.delivered_to END
                  FROM (SELECT w.tid, w.req, w.start, w.fin,
                               CASE WHEN p_auto_ack AND w.fin > w.start THEN w.fin ELSE w.start END AS done
                          FROM unnest(a_tid, a_req, a_start, a_fin) AS w(tid, req, start, fin)) u
                 WHERE lc.ctid = u.tid;  -- the versions locked above (51_cursor_versions.sql)
                RETURN QUERY
                    SELECT u.req, u.pid, u.name, v_leases[u.req], u.start, u.fin, s.first_offset, s.codec, s.body,
                           NULL::bigint[], NULL::integer, NULL::bigint, NULL::integer, NULL::bigint
                      FROM unnest(a_req, a_pid, a_name, a_start, a_fin) WITH ORDINALITY AS u(req, pid, name, start, fin, ord)
                     CROSS JOIN LATERAL (SELECT coalesce((SELECT t.last_offset FROM queen.log_segments t
                                                           WHERE t.partition_id = u.pid AND t.last_offset >= u.fin
                                                           ORDER BY t.last_offset LIMIT 1), u.fin) AS top) b
                      JOIN queen.log_segments s
                        ON s.partition_id = u.pid AND s.last_offset > u.start AND s.last_offset <= b.top
                       AND s.first_offset <= u.fin
                     WHERE u.fin > u.start
                     ORDER BY u.ord, s.last_offset;
                -- The counts row of each request that handed out offsets again (55_pop.sql's header).
                RETURN QUERY
                    SELECT u.req, NULL::bigint, NULL::text, NULL::uuid, NULL::bigint, NULL::bigint, NULL::bigint,
                           NULL::smallint, NULL::bytea, NULL::bigint[], 0, sum(least(u.fin, u.delivered) - u.start)::bigint,
                           0, 0::bigint
                      FROM unnest(a_req, a_start, a_fin, a_delivered) AS u(req, start, fin, delivered)
                     WHERE u.fin > u.start AND u.delivered > u.start
                     GROUP BY u.req
                     ORDER BY u.req;
                RETURN;
            END IF;
        END IF;
    END IF;

    -- Cursor by cursor: each request as queen.pop_stepwise alone, in request order.
    FOR i IN 1 .. v_n LOOP
        RETURN QUERY
            SELECT i, p.partition_id, p.partition_name, p.lease_id, p.span_start, p.span_end, p.seg_first,
                   p.seg_codec, p.seg_body, p.skip_offsets, p.leases_expired, p.redelivered,
                   p.lease_dead_letters, p.expired_dead_letters
              FROM queen.pop_stepwise(p_queue, NULL, p_group, p_batches[i], p_max_partitions[i], p_auto_ack,
                             p_subscribe_all, p_subscription_at) p;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION queen.pop_fused(text, text, integer[], integer[], boolean, boolean, timestamptz) IS
  'Several queue-wide pops of one group in one call: one claim walk, cursors handed out in claim order.';

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
