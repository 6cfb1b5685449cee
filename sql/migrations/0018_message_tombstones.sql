-- Migration 18: tombstones (DELETE /api/v1/messages/:partitionId/:transactionId). A message
-- cannot be removed from its segment (segments are append-only and shared by their messages),
-- so a delete records (partition, offset) here; delivery skips it for every group and browsing
-- shows it as deleted (sql/procedures/44_tombstones.sql). Insert-only: a row goes when
-- retention deletes the segment holding its message, or with its queue. deleted_by is the
-- caller's token subject, NULL while authentication is off.
CREATE TABLE queen.message_tombstones (
    partition_id bigint NOT NULL,
    msg_offset   bigint NOT NULL,
    deleted_at   timestamptz NOT NULL DEFAULT now(),
    deleted_by   text,
    PRIMARY KEY (partition_id, msg_offset)
);
