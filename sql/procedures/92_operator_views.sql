-- Views for a database administrator at psql (docs/operations.md). Each is counted live, with
-- the rule of 68_stats.sql ("Counts"), and costs O(what it covers): filter them by queue.
-- The broker never reads them. queue is the stored key; tenant and queue_name are its tenant
-- and its name there. They run with the reader's rights, so a tenant's database role sees its
-- own rows only (migration 26).

-- queen.consumer_lag: one row per cursor: how far the group is behind on the partition.
CREATE OR REPLACE VIEW queen.consumer_lag WITH (security_invoker = true) AS
SELECT q.name AS queue,
       p.name AS partition,
       c.partition_id,
       c.consumer_group,
       c.committed,
       h.last_offset AS head,
       greatest(h.last_offset - c.committed, 0) AS lag,
       CASE WHEN l.live THEN greatest(least(c.lease_end, h.last_offset) - c.committed, 0) ELSE 0 END AS leased,
       c.ready_at AS oldest_waiting_at,
       CASE WHEN c.ready_at IS NOT NULL THEN floor(extract(epoch FROM now() - c.ready_at))::bigint ELSE 0 END
           AS time_lag_seconds,
       CASE WHEN l.live THEN c.lease_id END AS lease_id,
       CASE WHEN l.live THEN c.lease_expires_at END AS lease_expires_at,
       c.committed_at AS last_moved_at,
       q.tenant,
       queen.queue_local_name(q.name) AS queue_name
  FROM queen.log_consumers c
  JOIN queen.log_partitions p ON p.id = c.partition_id
  JOIN queen.queues q ON q.id = c.queue_id
 CROSS JOIN LATERAL queen.partition_head(c.partition_id) h
 CROSS JOIN LATERAL (SELECT coalesce(c.lease_id IS NOT NULL AND c.lease_expires_at > now(), false) AS live) l;
COMMENT ON VIEW queen.consumer_lag IS
  'Per cursor: committed offset, head, lag, leased count, oldest waiting message and its age.';

-- queen.queue_depth: one row per queue: its counts now (the listing routes read the same
-- numbers from the stats snapshot), and its oldest waiting message.
CREATE OR REPLACE VIEW queen.queue_depth WITH (security_invoker = true) AS
SELECT q.name AS queue,
       q.namespace,
       q.task,
       count(s.partition_id) AS partitions,
       coalesce(sum(s.total), 0)::bigint AS total,
       coalesce(sum(s.pending), 0)::bigint AS pending,
       coalesce(sum(s.processing), 0)::bigint AS processing,
       coalesce(sum(s.completed), 0)::bigint AS completed,
       coalesce(sum(s.dead_letter), 0)::bigint AS dead_letters,
       min(s.oldest_waiting_at) AS oldest_waiting_at,
       max(s.newest_at) AS newest_at,
       q.tenant,
       queen.queue_local_name(q.name) AS queue_name
  FROM queen.queues q
  LEFT JOIN queen.log_partitions p ON p.queue_id = q.id
  LEFT JOIN LATERAL queen.partition_stats(ARRAY[p.id]) s ON true
 GROUP BY q.id, q.name, q.namespace, q.task, q.tenant;
COMMENT ON VIEW queen.queue_depth IS
  'Per queue: partitions, total, pending, processing, completed, dead letters, oldest waiting message.';

-- queen.message_status: one row per stored message and group with a cursor on its partition:
-- the message's status for that group alone (queen.message_status_rule, 73_browse.sql):
-- deleted (a tombstone), dead_letter (a dead letter of that group), completed (at or below the
-- cursor), processing (inside a live lease), else pending. Filter it by queue (and partition).
CREATE OR REPLACE VIEW queen.message_status WITH (security_invoker = true) AS
SELECT m.id,
       m.queue,
       m.partition,
       m.partition_id,
       m."offset",
       m.transaction_id,
       m.created_at,
       c.consumer_group,
       queen.message_status_rule(
           m."offset",
           EXISTS (SELECT 1 FROM queen.message_tombstones t
                    WHERE t.partition_id = m.partition_id AND t.msg_offset = m."offset"),
           EXISTS (SELECT 1 FROM queen.dead_letters d
                    WHERE d.partition_id = m.partition_id AND d.msg_offset = m."offset"
                      AND d.consumer_group = c.consumer_group),
           c.committed,
           CASE WHEN c.lease_id IS NOT NULL AND c.lease_expires_at > now() THEN c.lease_end END,
           '{}') AS status,
       m.tenant,
       m.queue_name
  FROM queen.messages m
  JOIN queen.log_consumers c ON c.partition_id = m.partition_id;
COMMENT ON VIEW queen.message_status IS
  'Per stored message and consumer group: deleted, dead_letter, completed, processing or pending.';
