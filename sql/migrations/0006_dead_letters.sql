-- Migration 6: dead letters. Real rows: the message, its group, error, attempts, time.
-- payload is NULL only when the message sat in a segment that plain SQL cannot decode
-- (zstd); then segment keeps a copy of that segment, so nothing is lost.
CREATE TABLE queen.dead_letters (
    id             bigserial PRIMARY KEY,
    queue_id       bigint NOT NULL,
    partition_id   bigint NOT NULL,
    msg_offset     bigint NOT NULL,
    consumer_group text NOT NULL,
    transaction_id text,
    trace_id       uuid,
    producer_sub   text,
    payload        text,
    segment        bytea,
    error_message  text,
    attempts       integer NOT NULL,
    reason         text NOT NULL,          -- 'dlq', 'retries_exhausted', 'lease_expired'
    created_at     timestamptz,            -- the message's createdAt
    failed_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dead_letters_queue ON queen.dead_letters (queue_id, failed_at DESC);
CREATE INDEX dead_letters_partition ON queen.dead_letters (partition_id, msg_offset);
