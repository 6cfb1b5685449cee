-- Migration 24: the state store of streams (docs/streams.md).
-- stream_queries: one row per registered query, found by its name (the SDK's queryId).
-- stream_lanes: one row per (query, source partition) a cycle has run on, never rewritten;
--   a cycle locks it FOR UPDATE, which serializes the cycles of one lane.
-- stream_state: the key/value state of a lane, insert-only per value: an upsert deletes the
--   key's current row and inserts the new value under a new version, so a key lookup meets
--   the newest version first in (query, partition, key, version DESC) and never walks the
--   versions a held snapshot keeps (docs/architecture.md, "Held snapshots"). A deleted key
--   leaves no row, so state a query no longer keeps leaves nothing behind once vacuumed.
CREATE TABLE queen.stream_queries (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name          text NOT NULL UNIQUE,
    source_queue  text NOT NULL,
    sink_queue    text,
    config_hash   text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE queen.stream_lanes (
    query_id      uuid NOT NULL REFERENCES queen.stream_queries(id) ON DELETE CASCADE,
    partition_id  bigint NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (query_id, partition_id)
);
-- Housekeeping keeps a partition with a lane (its state would be lost); a queue's deletion
-- deletes the lanes of its partitions.
CREATE INDEX stream_lanes_partition ON queen.stream_lanes (partition_id);

CREATE SEQUENCE queen.stream_state_version;

CREATE TABLE queen.stream_state (
    query_id      uuid NOT NULL,
    partition_id  bigint NOT NULL,
    key           text COLLATE "C" NOT NULL,  -- byte order: state/get answers sorted by it
    version       bigint NOT NULL,
    value         jsonb NOT NULL,
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX stream_state_key ON queen.stream_state (query_id, partition_id, key, version DESC);
