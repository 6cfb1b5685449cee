-- Migration 1: queues. One row per queue with its options (docs/http-api.md, configure).
-- Column defaults are the option defaults of docs/http-api.md; a queue created by its first push
-- gets them.
CREATE SCHEMA IF NOT EXISTS queen;

CREATE TABLE queen.queues (
    id                          bigserial PRIMARY KEY,
    name                        text NOT NULL UNIQUE,
    namespace                   text,
    task                        text,
    lease_time                  integer NOT NULL DEFAULT 300,
    retry_limit                 integer NOT NULL DEFAULT 3,
    retry_delay                 integer NOT NULL DEFAULT 1000,
    priority                    integer NOT NULL DEFAULT 0,
    delayed_processing          integer NOT NULL DEFAULT 0,
    window_buffer               integer NOT NULL DEFAULT 0,
    max_size                    bigint  NOT NULL DEFAULT 0,
    ttl                         integer NOT NULL DEFAULT 3600,
    retention_enabled           boolean NOT NULL DEFAULT false,
    retention_seconds           integer NOT NULL DEFAULT 0,
    completed_retention_seconds integer NOT NULL DEFAULT 0,
    max_wait_time_seconds       integer NOT NULL DEFAULT 0,
    dead_letter_queue           boolean NOT NULL DEFAULT false,
    dlq_after_max_retries       boolean NOT NULL DEFAULT false,
    encryption_enabled          boolean NOT NULL DEFAULT false,
    dedup_window_seconds        integer NOT NULL DEFAULT 3600,
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now()
);
