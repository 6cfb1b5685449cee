-- What the differential suites (ext_*.sql) share; they include it with
-- \i include/differential.sql. A suite defines pg_temp.scenario(path), which runs its calls on
-- queues named after the path and records what they answered in tables with a `path` column.

-- pg_temp.run_both_paths(): the scenario on the stock path (queen_ext must not be installed),
-- then CREATE EXTENSION queen_ext and the scenario again on the C path. It forces the next
-- statistics flush, so that the statement after it sees which C functions were called.
CREATE FUNCTION pg_temp.run_both_paths() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_temp.scenario('stock');
    CREATE EXTENSION queen_ext;
    PERFORM pg_temp.scenario('ext');
    PERFORM pg_stat_force_next_flush();
END $$;

-- pg_temp.c_path_ran(function): whether the C function (a regprocedure's text) was called,
-- read after pg_temp.run_both_paths.
CREATE FUNCTION pg_temp.c_path_ran(c_function text) RETURNS boolean
LANGUAGE sql AS $$ SELECT pg_stat_get_function_calls(c_function::regprocedure) > 0 $$;

-- pg_temp.paths_differ(relation, columns): how many rows of `relation` (a table or view with
-- a `path` column, 'stock' or 'ext') the two paths do not share, comparing `columns` as
-- multisets: rows only the C path gave plus rows only the stock path gave. 0 means the paths
-- agree.
CREATE FUNCTION pg_temp.paths_differ(relation text, columns text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format(
        'SELECT count(*) FROM ('
        '  (SELECT %1$s FROM %2$s WHERE path = ''ext'' EXCEPT ALL SELECT %1$s FROM %2$s WHERE path = ''stock'')'
        '  UNION ALL'
        '  (SELECT %1$s FROM %2$s WHERE path = ''stock'' EXCEPT ALL SELECT %1$s FROM %2$s WHERE path = ''ext'')) d',
        columns, relation::regclass) INTO n;
    RETURN n;
END $$;
