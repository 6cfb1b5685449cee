-- Maintenance flags (migration 0010, docs/maintenance-and-spool.md).
-- queen.get_maintenance() -> one row (push_maintenance, pop_maintenance, database_id,
--   updated_at): the flags every broker obeys and this database's identity. Reads only;
--   when the row is missing (deleted by hand) the flags read as off and database_id NULL.
-- queen.set_maintenance(push, pop) -> the row after the change. A NULL argument leaves that
--   flag as it is. Recreates the row when it is missing. Sends
--   pg_notify('queen_maintenance', '{"push":<bool>,"pop":<bool>}') so that brokers react
--   within milliseconds; brokers also re-read the flags every second, which bounds the
--   delay when a notification is missed (a broker whose LISTEN connection was down).
-- Brokers cache the flags: push maintenance sends pushes to the broker's local spool, pop
--   maintenance answers every pop 204.

CREATE OR REPLACE FUNCTION queen.get_maintenance()
RETURNS TABLE(push_maintenance boolean, pop_maintenance boolean, database_id uuid, updated_at timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(m.push_maintenance, false), coalesce(m.pop_maintenance, false), m.database_id, m.updated_at
      FROM (SELECT 1) AS one
      LEFT JOIN queen.maintenance_settings m ON m.id
$$;
COMMENT ON FUNCTION queen.get_maintenance() IS
  'The push/pop maintenance flags every broker obeys, and the database identity spools record.';

CREATE OR REPLACE FUNCTION queen.set_maintenance(p_push boolean, p_pop boolean)
RETURNS TABLE(push_maintenance boolean, pop_maintenance boolean, database_id uuid, updated_at timestamptz)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_push boolean;
    v_pop  boolean;
BEGIN
    INSERT INTO queen.maintenance_settings AS m (id, push_maintenance, pop_maintenance)
    VALUES (true, coalesce(p_push, false), coalesce(p_pop, false))
    ON CONFLICT (id) DO UPDATE
       SET push_maintenance = coalesce(p_push, m.push_maintenance),
           pop_maintenance  = coalesce(p_pop, m.pop_maintenance),
           updated_at       = now()
    RETURNING m.push_maintenance, m.pop_maintenance INTO v_push, v_pop;
    PERFORM pg_notify('queen_maintenance', json_build_object('push', v_push, 'pop', v_pop)::text);
    RETURN QUERY
        SELECT m.push_maintenance, m.pop_maintenance, m.database_id, m.updated_at
          FROM queen.maintenance_settings m WHERE m.id;
END;
$$;
COMMENT ON FUNCTION queen.set_maintenance(boolean, boolean) IS
  'Sets the push and/or pop maintenance flag (NULL keeps it) and notifies every broker.';
