-- Migration 2: partitions. One row per (queue, partition): the offset counter of an
-- ordered lane. Pushers take this row FOR UPDATE before allocating offsets.
CREATE TABLE queen.log_partitions (
    id              bigserial PRIMARY KEY,
    queue_id        bigint NOT NULL,
    name            text NOT NULL,
    last_offset     bigint NOT NULL DEFAULT 0,
    last_created_at timestamptz,          -- createdAt of the newest message (keeps it monotone)
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_push_at    timestamptz,
    UNIQUE (queue_id, name)
);
