-- Migration 15: the stats snapshot behind the operator's listings (sql/procedures/68_stats.sql;
-- docs/operator-routes.md). A refresh writes a new snapshot as new rows, one page of
-- partitions per transaction, and deletes the snapshots before the previous one: nothing is
-- updated in place per message, and no push, pop or ack path writes here.
CREATE TABLE queen.stats_snapshots (
    id          bigserial PRIMARY KEY,
    started_at  timestamptz NOT NULL,
    taken_at    timestamptz,             -- NULL while the pass runs
    duration_ms integer,
    partitions  bigint,
    queues      bigint
);

-- One row per (snapshot, page, queue): sums over that page's partitions of the queue.
-- Readers sum a snapshot's pages.
CREATE TABLE queen.queue_stats (
    snapshot_id     bigint NOT NULL,
    page            integer NOT NULL,
    queue_id        bigint NOT NULL,
    partitions      bigint NOT NULL,
    total           bigint NOT NULL,   -- messages ever pushed (the heads' offsets)
    pending         bigint NOT NULL,   -- per partition the largest ready count over its groups
    processing      bigint NOT NULL,   -- per partition the largest leased count over its groups
    completed       bigint NOT NULL,   -- per partition the largest committed offset over its groups
    dead_letter     bigint NOT NULL,
    newest_at       timestamptz,       -- createdAt of the newest message
    PRIMARY KEY (snapshot_id, page, queue_id)
);

-- One row per (snapshot, page, queue, group) with a cursor in that page.
CREATE TABLE queen.group_stats (
    snapshot_id         bigint NOT NULL,
    page                integer NOT NULL,
    queue_id            bigint NOT NULL,
    consumer_group      text NOT NULL,
    cursors             bigint NOT NULL,
    partitions_with_lag bigint NOT NULL,
    lag                 bigint NOT NULL,   -- Σ (head − committed)
    ready               bigint NOT NULL,   -- Σ lag outside live leases
    leased              bigint NOT NULL,   -- Σ uncommitted part of live leases
    max_lag             bigint NOT NULL,   -- the largest lag of one cursor
    committed           bigint NOT NULL,   -- Σ committed offsets
    oldest_waiting_at   timestamptz,       -- oldest first uncommitted message (time lag)
    oldest_leased_at    timestamptz,       -- oldest first message inside a live lease
    dead_letters        bigint NOT NULL,
    PRIMARY KEY (snapshot_id, page, queue_id, consumer_group)
);
