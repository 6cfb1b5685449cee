-- Migration 7: consumer-group metadata. One row per (queue name, group), written by the
-- group's first pop on the queue: the subscription start time (NULL = from the
-- beginning). Keyed by the queue's name so that a group that pops before the queue's
-- first push keeps the start it asked for.
CREATE TABLE queen.consumer_groups (
    queue_name      text NOT NULL,
    consumer_group  text NOT NULL,
    subscription_at timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue_name, consumer_group)
);
