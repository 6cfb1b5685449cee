-- queen.ack_completed: queen.ack for a call whose acks are all 'completed' (the common
-- case: a consumer acking what it processed), set-based: one statement locks the cursors,
-- one resolves, classifies, moves the cursors and answers, whatever the number of acks.
-- Same inputs, outputs and rules as queen.ack (60_ack.sql), which calls it; with only
-- completions the walk there reduces to: the cursor moves to the highest acked offset of
-- the live span (and over the tombstones right after it), attempts below it are forgotten,
-- the lease is released once the cursor reaches its end. Statuses are not checked here: queen.ack only calls it when every
-- status is 'completed'.
-- Lock order: cursor rows FOR UPDATE in partition id order, as queen.ack.

CREATE OR REPLACE FUNCTION queen.ack_completed(
    p_group text, p_partition_ids bigint[], p_txids text[], p_offsets bigint[], p_lease_ids uuid[])
RETURNS TABLE(item integer, success boolean, msg_offset bigint, noop boolean, dlq boolean,
              lease_released boolean, error text, queue_name text)
LANGUAGE plpgsql
-- Key lookups only: a plan cached while a table was small must not scan it whole once it
-- has grown (docs/architecture.md, "Plans that stay right").
SET enable_seqscan = off
SET jit = off
-- Generic plans only: their statements take arrays and ids as parameters, for which the
-- planner prefers a custom plan, planned again on every call (most of a call's CPU); the
-- settings above leave one generic plan, key lookups (docs/architecture.md, "Plans that stay right").
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_tids tid[];
BEGIN
    -- With queen_ext 1.3 the same contract runs in C (ext/ack_completed.c).
    IF to_regproc('queen_ext.ack_completed') IS NOT NULL THEN
        RETURN QUERY SELECT * FROM queen_ext.ack_completed(p_group, p_partition_ids, p_txids, p_offsets, p_lease_ids);
        RETURN;
    END IF;
    v_tids := queen.lock_cursors(p_group, p_partition_ids);  -- newest versions, locked

    -- A new statement, so its snapshot sees the cursors as locked.
    RETURN QUERY
    WITH acks AS (
        SELECT u.i::integer AS i, u.pid, u.txid, u.off AS given, u.lease
          FROM unnest(p_partition_ids, p_txids, p_offsets, p_lease_ids)
               WITH ORDINALITY AS u(pid, txid, off, lease, i)
    ), cursors AS MATERIALIZED (
        SELECT lc.partition_id AS pid, lc.ctid AS tid, lc.committed, lc.lease_id, lc.lease_end, lc.attempts_offset,
               coalesce(lc.lease_id IS NOT NULL AND lc.lease_expires_at > now(), false) AS live, qu.name AS qname
          FROM queen.log_consumers lc
          JOIN queen.queues qu ON qu.id = lc.queue_id
         WHERE lc.ctid = ANY (v_tids)
    ), resolved AS MATERIALIZED (
        -- An ack by transaction id: its dedup row when that offset is committed or inside
        -- the live span (a reused id elsewhere does not count), else a search of the span.
        SELECT a.i, a.pid, a.lease, c.pid IS NOT NULL AS has_cursor, c.committed, c.lease_id AS cur_lease,
               c.lease_end, c.live, c.qname,
               CASE WHEN c.pid IS NULL THEN NULL
                    WHEN a.given IS NOT NULL THEN a.given
                    ELSE coalesce(
                        (SELECT d.msg_offset FROM queen.log_dedup d
                          WHERE d.partition_id = a.pid AND d.transaction_id = a.txid
                            AND (d.msg_offset <= c.committed OR (c.live AND d.msg_offset <= c.lease_end))),
                        CASE WHEN c.live THEN queen.find_in_span(a.pid, c.committed, c.lease_end, a.txid) END)
               END AS off
          FROM acks a
          LEFT JOIN cursors c ON c.pid = a.pid
    ), classified AS MATERIALIZED (
        SELECT r.*,
               CASE WHEN NOT r.has_cursor OR r.off IS NULL THEN 'unresolvable'
                    WHEN r.off <= r.committed THEN 'noop'
                    WHEN r.live AND r.off <= r.lease_end AND (r.lease IS NULL OR r.lease = r.cur_lease) THEN 'signal'
                    ELSE 'unresolvable'
               END AS state
          FROM resolved r
    ), moved AS MATERIALIZED (
        SELECT c.pid, c.tid, c.live, x.top, n.new_committed,
               c.live AND n.new_committed >= c.lease_end AS released
          FROM cursors c
          LEFT JOIN (SELECT k.pid, max(k.off) AS top FROM classified k
                      WHERE k.state = 'signal' GROUP BY k.pid) x ON x.pid = c.pid
         -- A commit short of the span end moves over the tombstones that follow it
         -- (44_tombstones.sql): one probe, only for a partial acknowledgement.
         CROSS JOIN LATERAL (
            SELECT CASE WHEN c.live AND x.top > c.committed AND x.top < c.lease_end
                        THEN queen.past_tombstones(c.pid, x.top, c.lease_end)
                        ELSE greatest(c.committed, x.top) END AS new_committed) n
    ), updated AS (
        UPDATE queen.log_consumers lc
           SET committed = m.new_committed,
               attempts = CASE WHEN lc.attempts_offset <= m.new_committed THEN 0 ELSE lc.attempts END,
               attempts_offset = CASE WHEN lc.attempts_offset <= m.new_committed THEN 0 ELSE lc.attempts_offset END,
               lease_counted = CASE WHEN m.released THEN false ELSE lc.lease_counted END,
               lease_id = CASE WHEN m.released THEN NULL ELSE lc.lease_id END,
               lease_end = CASE WHEN m.released THEN NULL ELSE lc.lease_end END,
               lease_expires_at = CASE WHEN m.released THEN NULL ELSE lc.lease_expires_at END,
               retry_at = NULL
          FROM moved m
         WHERE lc.ctid = m.tid
        RETURNING 1
    )
    SELECT k.i, k.state IN ('noop', 'signal'), k.off, k.state = 'noop', false,
           CASE WHEN k.has_cursor THEN m.released OR NOT m.live ELSE true END,
           CASE WHEN k.state IN ('noop', 'signal') THEN NULL ELSE 'unresolvable' END,
           k.qname
      FROM classified k
      LEFT JOIN moved m ON m.pid = k.pid
     ORDER BY NOT k.has_cursor, k.pid, k.i;
END;
$$;
COMMENT ON FUNCTION queen.ack_completed(text, bigint[], text[], bigint[], uuid[]) IS
  'queen.ack for calls of completions only, set-based: cursors move to the highest acked offset of the live span.';
