-- How the proxy's functions answer when a shard cannot be reached or raises: one error
-- mapping for every hand-written and generated function (sql/operations.json).

-- queen_proxy.unavailable(sqlstate, message): whether a failure is a shard database's absence
-- for a while (it cannot be reached, or it was lost during the call, or the logical shard is
-- being moved: QNMOV) rather than an answer: the same call may succeed later.
CREATE OR REPLACE FUNCTION queen_proxy.unavailable(p_sqlstate text, p_message text)
RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    SELECT p_sqlstate LIKE '08%' OR p_sqlstate IN ('57P01', '57P02', '57P03', 'QNMOV')
           OR (p_sqlstate = 'XX000' AND p_message LIKE 'PL/Proxy function %')
$$;
COMMENT ON FUNCTION queen_proxy.unavailable IS
  'Whether a failure is a shard database''s absence for a while (it cannot be reached, or it was lost during the call, or the logical shard is being moved: QNMOV) rather than an answer: the same call may succeed later.';

-- queen_proxy.reraise(sqlstate, message): raises again an error met calling the shards, as
-- the broker must see it. A shard PL/Proxy could not reach, or lost mid-call, becomes QN503
-- naming the shard's database (the broker answers 503; a push's retry with the same
-- transaction ids stores each item once). A shard's own error keeps its SQLSTATE, without the
-- "function(n): [database] REMOTE ERROR: " PL/Proxy puts before its message.
CREATE OR REPLACE FUNCTION queen_proxy.reraise(p_sqlstate text, p_message text)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_database text := substring(p_message FROM '^\S+\(\d+\): \[([^]]+)\]');
BEGIN
    IF p_sqlstate <> 'QNMOV' AND queen_proxy.unavailable(p_sqlstate, p_message) THEN
        RAISE EXCEPTION 'shard database % is unavailable; retry with the same transaction ids',
              coalesce(v_database, substring(p_message FROM '\[([^]]+)\]'), '(unknown)')
              USING ERRCODE = 'QN503';
    END IF;
    RAISE EXCEPTION USING ERRCODE = p_sqlstate,
                          MESSAGE = regexp_replace(p_message, '^\S+\(\d+\): \[[^]]+\] REMOTE \S+: ', '');
END;
$$;
COMMENT ON FUNCTION queen_proxy.reraise IS
  'Raises again an error met calling the shards, as the broker must see it.';
