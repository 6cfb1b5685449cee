-- Migration 5: the dedup index, (partition, transactionId) -> offset, probed under the
-- partition lock before offsets are allocated. A row older than the queue's
-- dedupWindowSeconds no longer counts (compared by time) and is overwritten on reuse.
CREATE TABLE queen.log_dedup (
    partition_id   bigint NOT NULL,
    transaction_id text NOT NULL,
    msg_offset     bigint NOT NULL,
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (partition_id, transaction_id)
);
