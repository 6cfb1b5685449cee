-- Migration 23: where a cursor's live lease began (GET /api/v1/status, `leases`): the committed
-- offset when a pop took the lease, so the lease handed out lease_end − lease_start messages and
-- committed − lease_start of them have been acknowledged since, whatever extensions and partial
-- acks followed. Written by the claim in the row version it writes anyway; NULL for leases
-- taken before this migration, which then count what is left of them.
ALTER TABLE queen.log_consumers ADD COLUMN lease_start bigint;
