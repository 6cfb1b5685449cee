-- Migration 30: a shard's receipts (migration 28) name queues, partitions and transaction ids,
-- so a tenant's role sees only those of its own partitions, like the other tables of a
-- partition's rows (migration 26, docs/tenancy.md "A database role per tenant").
ALTER TABLE queen.shard_receipts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON queen.shard_receipts USING (partition_id IN (SELECT id FROM queen.log_partitions));
