-- Migration 17: per-minute activity counters behind /api/v1/status and /api/v1/analytics
-- (docs/status-and-analytics.md). Each broker counts in memory and adds its counts once a
-- minute (and at shutdown) with queen.flush_activity (93_activity_metrics.sql): one UPSERT per
-- (minute, broker) and per (minute, queue), so no push, pop or ack writes here.

-- A gauge sampled once a second and merged over samples and brokers: avg = sum / n.
CREATE TYPE queen.gauge AS (n bigint, sum double precision, min double precision,
                            max double precision, last double precision);

-- One row per (minute, broker process).
CREATE TABLE queen.broker_metrics (
    minute               timestamptz NOT NULL,
    hostname             text NOT NULL,
    port                 integer NOT NULL,
    push_requests        bigint NOT NULL DEFAULT 0,
    push_messages        bigint NOT NULL DEFAULT 0,
    pop_requests         bigint NOT NULL DEFAULT 0,
    pop_messages         bigint NOT NULL DEFAULT 0,
    pop_empty            bigint NOT NULL DEFAULT 0,
    ack_requests         bigint NOT NULL DEFAULT 0,
    ack_messages         bigint NOT NULL DEFAULT 0,
    ack_success          bigint NOT NULL DEFAULT 0,   -- applied acks with status completed
    ack_failed           bigint NOT NULL DEFAULT 0,   -- applied acks with status failed, retry or dlq
    transaction_requests bigint NOT NULL DEFAULT 0,
    dead_lettered        bigint NOT NULL DEFAULT 0,
    db_calls             bigint NOT NULL DEFAULT 0,   -- statements completed
    db_errors            bigint NOT NULL DEFAULT 0,   -- statements failed, domain errors excepted
    pop_lag_sum_ms       bigint NOT NULL DEFAULT 0,   -- Σ (pop time − createdAt) of delivered messages
    pop_lag_count        bigint NOT NULL DEFAULT 0,
    pop_lag_max_ms       bigint NOT NULL DEFAULT 0,
    loop_lag_ms          queen.gauge,                 -- lateness of a 100 ms timer
    cpu_user             queen.gauge,                 -- percent of one core × 100
    cpu_system           queen.gauge,
    rss_bytes            queen.gauge,
    virtual_bytes        queen.gauge,
    pool_size            queen.gauge,
    pool_idle            queen.gauge,
    pool_active          queen.gauge,
    pool_waiting         queen.gauge,                 -- requests waiting for a connection
    background_jobs      queen.gauge,                 -- spooled items waiting for the drain
    parked               queen.gauge,                 -- parked long-polls
    PRIMARY KEY (minute, hostname, port)
);

-- One row per (minute, queue), summed over brokers.
CREATE TABLE queen.queue_metrics (
    minute             timestamptz NOT NULL,
    queue_name         text NOT NULL,
    push_requests      bigint NOT NULL DEFAULT 0,
    push_messages      bigint NOT NULL DEFAULT 0,
    pop_messages       bigint NOT NULL DEFAULT 0,
    pop_empty          bigint NOT NULL DEFAULT 0,
    ack_requests       bigint NOT NULL DEFAULT 0,
    ack_success        bigint NOT NULL DEFAULT 0,
    ack_failed         bigint NOT NULL DEFAULT 0,
    transactions       bigint NOT NULL DEFAULT 0,
    pop_lag_sum_ms     bigint NOT NULL DEFAULT 0,
    pop_lag_count      bigint NOT NULL DEFAULT 0,
    pop_lag_max_ms     bigint NOT NULL DEFAULT 0,
    parked_avg         double precision NOT NULL DEFAULT 0,  -- Σ over brokers of their minute average
    partitions_created bigint NOT NULL DEFAULT 0,
    partitions_deleted bigint NOT NULL DEFAULT 0,
    partition_count    bigint,                               -- the largest snapshot in the minute
    PRIMARY KEY (minute, queue_name)
);

-- Parked long-polls per (minute, queue, broker): the "individual replicas" view.
CREATE TABLE queen.queue_parked_metrics (
    minute     timestamptz NOT NULL,
    queue_name text NOT NULL,
    hostname   text NOT NULL,
    port       integer NOT NULL,
    parked_avg double precision NOT NULL,
    PRIMARY KEY (minute, queue_name, hostname, port)
);

-- Lifetime totals over every broker, added to by each flush.
CREATE TABLE queen.metrics_totals (
    id                   boolean PRIMARY KEY DEFAULT true CHECK (id),
    push_requests        bigint NOT NULL DEFAULT 0,
    push_messages        bigint NOT NULL DEFAULT 0,
    pop_requests         bigint NOT NULL DEFAULT 0,
    pop_messages         bigint NOT NULL DEFAULT 0,
    ack_requests         bigint NOT NULL DEFAULT 0,
    ack_messages         bigint NOT NULL DEFAULT 0,
    ack_success          bigint NOT NULL DEFAULT 0,
    ack_failed           bigint NOT NULL DEFAULT 0,
    transaction_requests bigint NOT NULL DEFAULT 0,
    dead_lettered        bigint NOT NULL DEFAULT 0,
    db_errors            bigint NOT NULL DEFAULT 0
);
INSERT INTO queen.metrics_totals DEFAULT VALUES;

-- One row per partition a retention run removed messages from (/analytics/retention).
CREATE TABLE queen.retention_history (
    run_at                   timestamptz NOT NULL,
    queue_name               text NOT NULL,
    partition_id             bigint NOT NULL,
    retention_msgs           bigint NOT NULL DEFAULT 0,
    completed_retention_msgs bigint NOT NULL DEFAULT 0,
    eviction_msgs            bigint NOT NULL DEFAULT 0
);
CREATE INDEX retention_history_run_at ON queen.retention_history (run_at);

-- Partitions a snapshot saw that the snapshot before it did not (ids above its newest): the
-- per-minute partitionsCreated of queue_metrics (queen.record_partition_activity).
ALTER TABLE queen.queue_stats ADD COLUMN created_since_previous bigint NOT NULL DEFAULT 0;
ALTER TABLE queen.stats_snapshots ADD COLUMN last_partition_id bigint;
-- Partitions of the page holding at least one dead letter (/api/v1/status affectedPartitions).
ALTER TABLE queen.queue_stats ADD COLUMN partitions_with_dead_letters bigint NOT NULL DEFAULT 0;

-- A queue's activity over a window (status and analytics filtered by queue).
CREATE INDEX queue_metrics_queue ON queen.queue_metrics (queue_name, minute);
