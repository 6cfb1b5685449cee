-- A shard of a sharded deployment (docs/scaling.md) knows how many logical shards there are,
-- so its new partition ids carry their logical shard in their low bits. No row: not a shard.
CREATE TABLE queen.shard_identity (
    only_row       boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    logical_shards integer NOT NULL CHECK (logical_shards BETWEEN 1 AND 1024
                                           AND (logical_shards & (logical_shards - 1)) = 0),
    since          timestamptz NOT NULL DEFAULT now()
);
