-- The tables the procedure files put triggers on, locked first and in one statement.
-- CREATE OR REPLACE TRIGGER takes SHARE ROW EXCLUSIVE on its table until the procedures'
-- transaction commits. Taken file by file, the apply would hold log_consumers while waiting
-- for log_partitions, and a push or transaction of another broker holding log_partitions and
-- wanting log_consumers would deadlock with it. Taken here, before anything else, the apply
-- holds none of them while it waits: traffic waits for the apply, and the broker applies
-- under a lock_timeout shorter than deadlock_timeout and retries (broker/schema/migrator.cpp),
-- so it gives way before PostgreSQL would cancel a client's transaction. A DO block, so that
-- the file also runs outside a transaction block (psql, pg_regress), where it holds nothing.
-- Every table named in a CREATE OR REPLACE TRIGGER of sql/procedures must be listed here
-- (tests/unit/schema_bundle_test.cpp checks it).
DO $$
BEGIN
    LOCK TABLE queen.queues, queen.log_partitions, queen.log_consumers, queen.dead_letters, queen.stream_queries
        IN SHARE ROW EXCLUSIVE MODE;
END
$$;
