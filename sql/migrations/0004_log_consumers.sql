-- Migration 4: consumer cursors. One row per (partition, consumer group): the committed
-- offset, the live lease over (committed, lease_end], and the attempt counter of the head.
CREATE TABLE queen.log_consumers (
    partition_id     bigint NOT NULL,
    consumer_group   text NOT NULL,
    queue_id         bigint NOT NULL,
    committed        bigint NOT NULL DEFAULT 0,
    lease_id         uuid,                -- NULL: no lease
    lease_end        bigint,
    lease_expires_at timestamptz,
    lease_counted    boolean NOT NULL DEFAULT false,  -- this lease already counted its attempt
    attempts         integer NOT NULL DEFAULT 0,      -- failed deliveries of attempts_offset
    attempts_offset  bigint NOT NULL DEFAULT 0,
    retry_at         timestamptz,         -- after a `failed`: not redelivered before this
    last_claimed_at  timestamptz,
    PRIMARY KEY (partition_id, consumer_group)
);
CREATE INDEX log_consumers_queue_group ON queen.log_consumers (queue_id, consumer_group);
CREATE INDEX log_consumers_lease ON queen.log_consumers (lease_id) WHERE lease_id IS NOT NULL;
