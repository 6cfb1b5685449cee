-- Migration 27: the bytes a queue's segments take on disk, per stats snapshot (docs/tenancy.md,
-- "Limits per tenant"): QUEEN_TENANT_MAX_BYTES is checked against their sum per tenant, so no
-- push writes a counter for it. Rows of snapshots taken before this migration count 0.
ALTER TABLE queen.queue_stats ADD COLUMN stored_bytes bigint NOT NULL DEFAULT 0;
