-- Migration 25: the tenant of a queue (docs/tenancy.md). A queue of a named tenant is stored
-- under the key `tenant US name` (US: U+001F, which no tenant name holds), so every table
-- keyed by a queue's name (consumer groups, activity, stream queries) keeps tenants apart
-- without a column of its own. `tenant` is derived from that key: NULL for a key without the
-- separator, which is every queue created before tenancy and every queue of the default
-- tenant (QUEEN_TENANCY_DEFAULT), which may therefore be renamed without a migration.
ALTER TABLE queen.queues
    ADD COLUMN tenant text GENERATED ALWAYS AS
        (CASE WHEN strpos(name, E'\x1f') > 0 THEN split_part(name, E'\x1f', 1) END) STORED;

CREATE INDEX queues_tenant ON queen.queues (tenant);
