-- Migration 14: cursor versions (sql/procedures/51_cursor_versions.sql; docs/architecture.md,
-- "Held snapshots"). Every update of a cursor row bumps its version, and the cursor's key
-- index is (partition, group, version DESC): each row version has its own index entry, and a
-- lookup reads the newest first, so the versions a held snapshot keeps are never visited.
-- A unique (partition, group) index would visit every one of them on each update to check
-- uniqueness, so that rule moves to log_cursor_keys, which is insert-only.
ALTER TABLE queen.log_consumers ADD COLUMN version bigint NOT NULL DEFAULT 0;
CREATE TABLE queen.log_cursor_keys (
    partition_id   bigint NOT NULL,
    consumer_group text NOT NULL,
    PRIMARY KEY (partition_id, consumer_group)
);
INSERT INTO queen.log_cursor_keys (partition_id, consumer_group)
SELECT partition_id, consumer_group FROM queen.log_consumers;
ALTER TABLE queen.log_consumers DROP CONSTRAINT log_consumers_pkey;
CREATE UNIQUE INDEX log_consumers_version ON queen.log_consumers (partition_id, consumer_group, version DESC);
