-- The proxy's generator: it reads the proxy routes of sql/operations.json (the catalogue of
-- every database operation and its bodies) into queen_proxy.api_routes and turns them into
-- PL/Proxy functions with the shards' own signatures (queen_proxy.generate_api, called by
-- `queen shards init` after these files, with the catalogue the broker carries).
--
-- Each row is one function of the proxy; `target` is the shard function it calls (its
-- signature is read from the first shard). Routes:
--   first     RUN ON 0: configuration every shard holds alike, read from one (deterministic)
--   hash      RUN ON queen.partition_hash(<arg>): the shard of a (queue, partition)
--   id        RUN ON <arg>: a partition id, whose low bits are its logical shard
--   split     SPLIT every array; RUN ON <arg> (an array of hashes or partition ids)
--   all       RUN ON ALL: written to every shard; the answer is the first row by <arg>
--   sum       RUN ON ALL: the shards' answers added up
--   every     RUN ON ALL: every shard's rows (in the order <arg> when given)
--   on_shard  RUN ON p_shard, a first argument naming the logical shard; the target without it
--   custom    written by hand in the sql/shards file the catalogue names; its arguments and
--             result must be the shard function's (queen_proxy.check_hand_written)
--   refuse    not served over shards yet: QN501 naming the function
CREATE TABLE IF NOT EXISTS queen_proxy.api_routes (
    proxy_function text PRIMARY KEY,
    route          text NOT NULL CHECK (route IN ('first', 'hash', 'id', 'split', 'all', 'sum', 'every', 'on_shard',
                                                  'custom', 'refuse')),
    arg            text,
    target         text
);
ALTER TABLE queen_proxy.api_routes ADD COLUMN IF NOT EXISTS operation text;
COMMENT ON TABLE queen_proxy.api_routes IS
  'The proxy routes of sql/operations.json, as generate_api last read them: one row per proxy function.';

-- queen_proxy.load_api_routes(catalogue): replaces queen_proxy.api_routes with the proxy
-- routes of the catalogue (sql/operations.json); returns how many rows it holds.
CREATE OR REPLACE FUNCTION queen_proxy.load_api_routes(p_catalogue jsonb)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_n integer;
BEGIN
    IF jsonb_typeof(p_catalogue -> 'operations') IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'the operation catalogue has no "operations" array' USING ERRCODE = 'QN409';
    END IF;
    TRUNCATE queen_proxy.api_routes;
    INSERT INTO queen_proxy.api_routes (proxy_function, route, arg, target, operation)
    SELECT p ->> 'function', p ->> 'route', p ->> 'arg', p ->> 'target', o ->> 'function'
      FROM jsonb_array_elements(p_catalogue -> 'operations') AS o,
           jsonb_array_elements(coalesce(o -> 'proxy', '[]')) AS p;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n;
END;
$$;
COMMENT ON FUNCTION queen_proxy.load_api_routes(jsonb) IS
  'Replaces queen_proxy.api_routes with the proxy routes of the operation catalogue (sql/operations.json).';

-- queen_proxy.check_hand_written(function, arguments, result): refuses (QN409, naming both)
-- a hand-written proxy function whose arguments or result differ from those of the shard
-- function it fronts (as pg_get_function_arguments and pg_get_function_result print them on
-- the first shard), or that does not exist.
CREATE OR REPLACE FUNCTION queen_proxy.check_hand_written(p_function text, p_arguments text, p_result text)
RETURNS void
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_arguments text;
    v_result    text;
BEGIN
    SELECT pg_get_function_arguments(p.oid), pg_get_function_result(p.oid) INTO v_arguments, v_result
      FROM pg_proc p
     WHERE p.oid = to_regproc(p_function);
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the proxy lacks its hand-written %', p_function USING ERRCODE = 'QN409';
    END IF;
    IF v_arguments IS DISTINCT FROM p_arguments OR v_result IS DISTINCT FROM p_result THEN
        RAISE EXCEPTION 'the proxy''s hand-written % does not match the shards'' %', p_function, p_function
              USING ERRCODE = 'QN409',
                    DETAIL = format('proxy: (%s) RETURNS %s; shards: (%s) RETURNS %s',
                                    v_arguments, coalesce(v_result, '(a procedure)'), p_arguments,
                                    coalesce(p_result, '(a procedure)'));
    END IF;
END;
$$;
COMMENT ON FUNCTION queen_proxy.check_hand_written(text, text, text) IS
  'Refuses (QN409) a hand-written proxy function missing, or declared otherwise than the shard function it fronts.';

-- queen_proxy.generate_api(catalogue): loads the catalogue's proxy routes and (re)creates
-- every function of queen_proxy.api_routes with the first shard's signature of its target,
-- each with a COMMENT ON naming its route; returns how many it created. Refused (QN409) when
-- a target is missing on the shard, or a custom function is missing or declared otherwise.
DROP FUNCTION IF EXISTS queen_proxy.generate_api();
CREATE OR REPLACE FUNCTION queen_proxy.generate_api(p_catalogue jsonb)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    r        record;
    v_shards text := 'queen_shards';
    v_args   text;
    v_call   text;
    v_result text;
    v_set    text;
    v_target text;
    v_n      integer := 0;
BEGIN
    PERFORM queen_proxy.load_api_routes(p_catalogue);
    CREATE TEMP TABLE shard_signatures ON COMMIT DROP AS
        SELECT * FROM queen_proxy.shard_signatures(
            (SELECT array_agg(split_part(coalesce(target, proxy_function), '.', 2)) FROM queen_proxy.api_routes));
    FOR r IN
        SELECT a.*, s.arguments, s.argument_names, s.result, s.returns_set, s.returns_table, s.name AS found
          FROM queen_proxy.api_routes a
          LEFT JOIN shard_signatures s ON s.name = split_part(coalesce(a.target, a.proxy_function), '.', 2)
         ORDER BY a.proxy_function
    LOOP
        IF r.found IS NULL THEN
            RAISE EXCEPTION 'the shards have no function % for the proxy''s %', coalesce(r.target, r.proxy_function),
                  r.proxy_function USING ERRCODE = 'QN409';
        END IF;
        v_args := coalesce(array_to_string(r.argument_names, ', '), '');
        v_target := coalesce(r.target, r.proxy_function);
        v_call := format('%s(%s)', v_target, v_args);
        -- The answer as a set: a scalar result becomes SETOF it.
        v_set := CASE WHEN r.returns_table OR r.returns_set THEN r.result ELSE 'SETOF ' || r.result END;
        IF r.route = 'custom' THEN
            PERFORM queen_proxy.check_hand_written(r.proxy_function, r.arguments, r.result);
            CONTINUE;
        END IF;
        EXECUTE format('DROP ROUTINE IF EXISTS %s', r.proxy_function);
        IF r.route = 'every' AND r.proxy_function LIKE 'queen\_proxy.%' THEN
            EXECUTE format('CREATE FUNCTION %s(%s) RETURNS %s LANGUAGE plproxy AS '
                           '$body$ CLUSTER %L; RUN ON ALL; TARGET %s; $body$',
                           r.proxy_function, r.arguments, v_set, v_shards, r.target);
        ELSIF r.route IN ('first', 'hash', 'id', 'split') THEN
            EXECUTE format('CREATE FUNCTION %s(%s) RETURNS %s LANGUAGE plproxy AS $body$ CLUSTER %L; %s RUN ON %s; %s $body$',
                           r.proxy_function, r.arguments, r.result, v_shards,
                           CASE WHEN r.route = 'split' THEN 'SPLIT ALL;' ELSE '' END,
                           CASE r.route WHEN 'first' THEN '0'
                                        WHEN 'hash' THEN format('queen.partition_hash(%s)', r.arg)
                                        ELSE r.arg END,
                           CASE WHEN r.target IS NOT NULL THEN format('TARGET %s;', r.target) ELSE '' END);
        ELSIF r.route = 'on_shard' THEN
            EXECUTE format('CREATE FUNCTION %s(p_shard integer, %s) RETURNS %s LANGUAGE plproxy AS '
                           '$body$ CLUSTER %L; RUN ON p_shard; SELECT * FROM %s; $body$',
                           r.proxy_function, r.arguments, r.result, v_shards, v_call);
        ELSIF r.route IN ('all', 'sum', 'every') THEN
            EXECUTE format('DROP FUNCTION IF EXISTS queen_proxy.%s_on_all', split_part(r.proxy_function, '.', 2));
            EXECUTE format('CREATE FUNCTION queen_proxy.%s_on_all(%s) RETURNS %s LANGUAGE plproxy AS '
                           '$body$ CLUSTER %L; RUN ON ALL; TARGET %s; $body$',
                           split_part(r.proxy_function, '.', 2), r.arguments, v_set, v_shards,
                           coalesce(r.target, r.proxy_function));
            -- A shard's error comes back as the shard raised it (queen_proxy.reraise).
            EXECUTE format('CREATE FUNCTION %s(%s) RETURNS %s LANGUAGE plpgsql AS $body$ #variable_conflict use_column
'
                           'BEGIN %s; EXCEPTION WHEN OTHERS THEN PERFORM queen_proxy.reraise(SQLSTATE, SQLERRM); END $body$',
                           r.proxy_function, r.arguments, r.result,
                           CASE WHEN r.route = 'sum'
                                THEN format('RETURN (SELECT coalesce(sum(x), 0)::%s FROM queen_proxy.%s_on_all(%s) AS x)',
                                            r.result, split_part(r.proxy_function, '.', 2), v_args)
                                WHEN r.returns_table OR r.returns_set
                                THEN format('RETURN QUERY SELECT * FROM queen_proxy.%s_on_all(%s) %s %s',
                                            split_part(r.proxy_function, '.', 2), v_args,
                                            CASE WHEN r.arg IS NOT NULL THEN 'ORDER BY ' || r.arg ELSE '' END,
                                            CASE WHEN r.route = 'all' THEN 'LIMIT 1' ELSE '' END)
                                ELSE format('RETURN (SELECT x FROM queen_proxy.%s_on_all(%s) AS x %s LIMIT 1)',
                                            split_part(r.proxy_function, '.', 2), v_args,
                                            CASE WHEN r.arg IS NOT NULL THEN 'ORDER BY ' || r.arg ELSE '' END) END);
        ELSE
            -- A procedure (the broker CALLs it) has no result.
            EXECUTE format('CREATE %s %s(%s) %s LANGUAGE plpgsql AS $body$ BEGIN '
                           'RAISE EXCEPTION %L USING ERRCODE = %L; END $body$',
                           CASE WHEN r.result IS NULL THEN 'PROCEDURE' ELSE 'FUNCTION' END, r.proxy_function,
                           r.arguments, CASE WHEN r.result IS NULL THEN '' ELSE 'RETURNS ' || r.result END,
                           format('%s is not served over shards yet (docs/scaling.md)', r.proxy_function), 'QN501');
        END IF;
        EXECUTE format('COMMENT ON ROUTINE %s IS %L', to_regproc(r.proxy_function)::regprocedure,
                       format('Proxy, generated from sql/operations.json (operation %s): %s.', r.operation,
                              CASE r.route
                                   WHEN 'first' THEN format('%s on the first logical shard', v_target)
                                   WHEN 'hash' THEN format('%s on the shard of queen.partition_hash(%s)', v_target, r.arg)
                                   WHEN 'id' THEN format('%s on the logical shard in the low bits of %s', v_target, r.arg)
                                   WHEN 'split' THEN format('%s on each shard with its share of the arrays, by %s',
                                                            v_target, r.arg)
                                   WHEN 'on_shard' THEN format('%s on the logical shard p_shard', v_target)
                                   WHEN 'all' THEN format('%s on every shard, the first answer%s', v_target,
                                                          coalesce(' by ' || r.arg, ''))
                                   WHEN 'sum' THEN format('%s on every shard, the answers added up', v_target)
                                   WHEN 'every' THEN format('%s on every shard, every row%s', v_target,
                                                            coalesce(' ordered by ' || r.arg, ''))
                                   ELSE 'not served over shards yet (QN501)' END));
        IF r.route IN ('all', 'sum', 'every') AND r.proxy_function NOT LIKE 'queen\_proxy.%' THEN
            EXECUTE format('COMMENT ON FUNCTION %s IS %L',
                           to_regproc('queen_proxy.' || split_part(r.proxy_function, '.', 2) || '_on_all')::regprocedure,
                           format('Proxy, generated from sql/operations.json (operation %s): %s on every shard, '
                                  'the rows %s merges.', r.operation, v_target, r.proxy_function));
        END IF;
        v_n := v_n + 1;
    END LOOP;
    RETURN v_n;
END;
$$;
COMMENT ON FUNCTION queen_proxy.generate_api IS
  'Loads the catalogue''s proxy routes and (re)creates the generated proxy functions with the first shard''s signatures; how many.';
