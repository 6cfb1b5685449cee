-- queen.messages: every stored message, decoded from its segment by plain SQL (raw
-- segments; a zstd segment that this database cannot decode shows its rows with codec
-- 'zstd' and NULL payload columns). payload is jsonb (see queen.payload_jsonb);
-- payload_text is the JSON text exactly as stored. Filters on queue, partition or partition_id touch
-- only that partition's segments. For a lookup by id use queen.message(id), which reads
-- exactly one segment. queue is the stored key; tenant and queue_name are its tenant and its
-- name there (docs/tenancy.md). The view runs with the reader's rights, so a tenant's database
-- role sees its own messages only (migration 26).

CREATE OR REPLACE VIEW queen.messages WITH (security_invoker = true) AS
SELECT queen.message_id(s.partition_id, s.first_offset + f.idx) AS id,
       q.name AS queue,
       p.name AS partition,
       s.partition_id,
       s.first_offset + f.idx AS "offset",
       f.transaction_id,
       f.trace_id,
       f.producer_sub,
       queen.payload_jsonb(f.payload) AS payload,
       s.created_at,
       CASE s.codec WHEN 0 THEN 'raw' WHEN 1 THEN 'zstd' ELSE 'unknown' END AS codec,
       f.payload AS payload_text,
       q.tenant,
       queen.queue_local_name(q.name) AS queue_name
  FROM queen.log_segments s
  JOIN queen.log_partitions p ON p.id = s.partition_id
  JOIN queen.queues q ON q.id = p.queue_id
 CROSS JOIN LATERAL queen.decode_segment(s.body) f;
COMMENT ON VIEW queen.messages IS 'Stored messages decoded from their segments.';

CREATE OR REPLACE FUNCTION queen.message(p_id uuid)
RETURNS SETOF queen.messages
LANGUAGE sql STABLE
AS $$
    SELECT queen.message_id(s.partition_id, s.first_offset + f.idx), q.name, p.name, s.partition_id,
           s.first_offset + f.idx, f.transaction_id, f.trace_id, f.producer_sub, queen.payload_jsonb(f.payload),
           s.created_at, CASE s.codec WHEN 0 THEN 'raw' WHEN 1 THEN 'zstd' ELSE 'unknown' END, f.payload,
           q.tenant, queen.queue_local_name(q.name)
      FROM (SELECT * FROM queen.log_segments seg
             WHERE seg.partition_id = queen.message_id_partition(p_id)
               AND seg.last_offset >= queen.message_id_offset(p_id)
             ORDER BY seg.last_offset LIMIT 1) s
      JOIN queen.log_partitions p ON p.id = s.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     CROSS JOIN LATERAL queen.decode_segment(s.body) f
     WHERE s.first_offset + f.idx = queen.message_id_offset(p_id)
$$;
COMMENT ON FUNCTION queen.message(uuid) IS 'The stored message with this id (at most one row); reads one segment.';
