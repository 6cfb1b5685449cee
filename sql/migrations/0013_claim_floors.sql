-- Migration 13: claim floors (sql/procedures/53_claim_floor.sql; docs/architecture.md, "Held
-- snapshots"). Per (queue, group), a lower bound on the ready_at of every cursor, so that a
-- claim's walk of log_consumers_ready starts past the entries that superseded cursor versions
-- leave there. Insert-only and read newest first (seq DESC), so a held snapshot that keeps old
-- rows never makes a reader visit them; housekeeping deletes all but the newest.
CREATE SEQUENCE queen.claim_floor_seq;
CREATE TABLE queen.claim_floors (
    queue_id       bigint NOT NULL,
    consumer_group text NOT NULL,
    seq            bigint NOT NULL DEFAULT nextval('queen.claim_floor_seq'),
    floor          timestamptz NOT NULL,
    PRIMARY KEY (queue_id, consumer_group, seq)
);
