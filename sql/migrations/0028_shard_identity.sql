-- A shard of a sharded deployment (docs/scaling.md) knows how many logical shards there are,
-- so its new partition ids carry their logical shard in their low bits, and which of them it
-- hosts, so it creates no partition of another's. No row: not a shard.
CREATE TABLE queen.shard_identity (
    only_row       boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    logical_shards integer NOT NULL CHECK (logical_shards BETWEEN 1 AND 1024
                                           AND (logical_shards & (logical_shards - 1)) = 0),
    hosted         integer[] NOT NULL,
    since          timestamptz NOT NULL DEFAULT now()
);

-- A shard's receipts of pushed items of queues without a dedup window (dedupWindowSeconds 0):
-- a push is atomic per shard only, so a client's retry after a failure elsewhere must still
-- be recognised here (docs/scaling.md). Kept for minutes (queen.expire_shard_receipts).
CREATE TABLE queen.shard_receipts (
    queue_name     text NOT NULL,
    partition_name text NOT NULL,
    transaction_id text NOT NULL,
    partition_id   bigint NOT NULL,
    msg_offset     bigint NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue_name, partition_name, transaction_id)
);
CREATE INDEX shard_receipts_created_at ON queen.shard_receipts (created_at);
