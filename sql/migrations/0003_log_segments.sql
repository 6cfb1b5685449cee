-- Migration 3: segments. One row per push to one partition, holding its messages as
-- frames (docs/segment-format.md). Append-only. All messages of a segment share one
-- createdAt, so created_at orders segments like offsets do.
CREATE TABLE queen.log_segments (
    partition_id bigint NOT NULL,
    first_offset bigint NOT NULL,
    last_offset  bigint NOT NULL,
    codec        smallint NOT NULL,       -- 0 raw, 1 zstd (same as the header's codec byte)
    created_at   timestamptz NOT NULL,
    body         bytea NOT NULL,
    PRIMARY KEY (partition_id, last_offset),
    CHECK (last_offset >= first_offset)
);
-- Raw segments are compressed by PostgreSQL's own lz4 TOAST compression.
ALTER TABLE queen.log_segments ALTER COLUMN body SET COMPRESSION lz4;
