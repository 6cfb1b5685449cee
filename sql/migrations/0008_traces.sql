-- Migration 8: message traces (docs/traces.md). One row per trace event that a producer or
-- consumer records about a message, addressed like an ack: (partition id, transaction id).
-- Not tied to stored messages (a trace may outlive its message's retention), but removed
-- with its partition (trigger in sql/procedures/76_traces.sql; no foreign key, because a
-- key-share lock on the partition row would make every trace insert wait for pushes that
-- hold that row FOR UPDATE).
CREATE TABLE queen.message_traces (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),   -- the traceId
    seq            bigint GENERATED ALWAYS AS IDENTITY,           -- insertion order (ties of created_at)
    partition_id   bigint NOT NULL,
    transaction_id text NOT NULL,
    consumer_group text NOT NULL,                                 -- '__QUEUE_MODE__' when none was given
    event_type     text NOT NULL,                                 -- 'info' when none was given
    data           jsonb NOT NULL,
    trace_names    text[] NOT NULL DEFAULT '{}',
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- The traces of one message in time order; also serves the delete of a partition's traces.
CREATE INDEX message_traces_message ON queen.message_traces (partition_id, transaction_id, created_at, seq);
-- Listing by trace name: trace_names @> ARRAY[name].
CREATE INDEX message_traces_names ON queen.message_traces USING gin (trace_names);
