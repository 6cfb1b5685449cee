-- Migration 10: maintenance settings (docs/maintenance-and-spool.md). ONE row holding the
-- push and pop maintenance flags that every broker sharing this database obeys, and the
-- database's identity: a broker's spool records it, so that a spool file is never drained
-- into another database. Read and written through queen.get_maintenance() and
-- queen.set_maintenance() (sql/procedures/78_maintenance.sql).
CREATE TABLE queen.maintenance_settings (
    id               boolean PRIMARY KEY DEFAULT true CHECK (id),    -- at most one row
    push_maintenance boolean NOT NULL DEFAULT false,
    pop_maintenance  boolean NOT NULL DEFAULT false,
    database_id      uuid NOT NULL DEFAULT gen_random_uuid(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
INSERT INTO queen.maintenance_settings DEFAULT VALUES;
