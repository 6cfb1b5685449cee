-- Migration 27: the bytes a queue's segments take on disk, per stats snapshot (docs/tenancy.md,
-- "Limits per tenant"): QUEEN_TENANT_MAX_BYTES is checked against their sum per tenant, so no
-- push writes a counter for it. A snapshot counts them only when asked to (0 otherwise), as do
-- the rows of snapshots taken before this migration.
ALTER TABLE queen.queue_stats ADD COLUMN stored_bytes bigint NOT NULL DEFAULT 0;

-- Until when some broker with QUEEN_TENANT_MAX_BYTES wants the snapshots to count bytes: the
-- elected broker that refreshes them may not have the setting itself. One row.
CREATE TABLE queen.stored_bytes_wanted (
    id    boolean PRIMARY KEY DEFAULT true CHECK (id),
    until timestamptz NOT NULL
);
