-- pg_temp.paths_differ(relation, columns): how many rows of `relation` (a table or view with
-- a `path` column, 'stock' or 'ext') the two paths do not share, comparing `columns` as
-- multisets: rows only the C path gave plus rows only the stock path gave. 0 means the paths
-- agree. The differential suites (ext_*.sql) include it with \i include/paths_differ.sql.
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
