-- The queen_ext extension's life cycle (ext/queen_ext.control, ext/sql/*.sql): the versions on
-- offer, install at 1.0, updates from 1.0 and from 1.2 equal to a fresh install (the base
-- script), declarations, members, and a DROP EXTENSION without CASCADE that leaves nothing behind.
SET client_min_messages = warning;
\set VERBOSITY terse
\set SHOW_CONTEXT never
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'queen_ext') AS ext_was_present \gset
CREATE EXTENSION IF NOT EXISTS queen_ext;
DROP EXTENSION queen_ext;

-- The declarations of the extension's functions, one row each.
CREATE FUNCTION pg_temp.functions()
RETURNS TABLE(function text, arguments text, result text, volatile "char", strict boolean,
              parallel "char", returns_set boolean, language name, symbol text, library text,
              comment text)
LANGUAGE sql STABLE AS $f$
  SELECT p.oid::regprocedure::text, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid),
         p.provolatile, p.proisstrict, p.proparallel, p.proretset, l.lanname, p.prosrc, p.probin,
         obj_description(p.oid, 'pg_proc')
    FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
    JOIN pg_namespace n ON n.oid = p.pronamespace
   WHERE n.nspname = 'queen_ext'
$f$;
-- The extension's members, as pg_describe_object names them.
CREATE FUNCTION pg_temp.members() RETURNS SETOF text LANGUAGE sql STABLE AS $f$
  SELECT pg_describe_object(d.classid, d.objid, d.objsubid)
    FROM pg_depend d JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
   WHERE e.extname = 'queen_ext' AND d.deptype = 'e'
$f$;

-- 1. The versions on offer: 1.0 and 1.4 have install scripts, 1.1 to 1.4 upgrade scripts.
SELECT name, default_version, installed_version FROM pg_available_extensions WHERE name = 'queen_ext';
SELECT version, superuser, relocatable, schema, requires
  FROM pg_available_extension_versions WHERE name = 'queen_ext' ORDER BY version;
SELECT source, target, path FROM pg_extension_update_paths('queen_ext') ORDER BY source, target;

-- 2. Version 1.0: the codec functions only.
CREATE EXTENSION queen_ext VERSION '1.0';
SELECT extversion, extnamespace::regnamespace, extrelocatable FROM pg_extension WHERE extname = 'queen_ext';
SELECT function, volatile, strict, parallel FROM pg_temp.functions() ORDER BY function;
SELECT to_regprocedure('queen_ext.dedup_probe(bigint,text[])') IS NULL AS no_dedup_probe_in_1_0;

-- 3. An update gives exactly what a fresh install gives, declaration by declaration: 1.0
-- updated (through every upgrade script), the released 1.2 and 1.3 updated, and a fresh install, which
-- runs the base script alone. Each install's function declarations, members, and the schema's
-- grants and comment are kept as text rows.
CREATE TEMP TABLE installs (install text, kind text, item text);
CREATE PROCEDURE pg_temp.record(install text) LANGUAGE sql AS $f$
  INSERT INTO installs SELECT install, 'function', f::text FROM pg_temp.functions() f;
  INSERT INTO installs SELECT install, 'member', m FROM pg_temp.members() m;
  INSERT INTO installs SELECT install, 'schema', format('%s %s', n.nspacl, obj_description(n.oid, 'pg_namespace'))
    FROM pg_namespace n WHERE n.nspname = 'queen_ext';
$f$;
-- The 1.0 install above, updated to the default version.
ALTER EXTENSION queen_ext UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'queen_ext';
CALL pg_temp.record('1.0, updated');
DROP EXTENSION queen_ext;
CREATE EXTENSION queen_ext VERSION '1.2';
SELECT extversion, (SELECT count(*) FROM pg_temp.functions()) AS functions
  FROM pg_extension WHERE extname = 'queen_ext';
ALTER EXTENSION queen_ext UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'queen_ext';
CALL pg_temp.record('1.2, updated');
DROP EXTENSION queen_ext;
CREATE EXTENSION queen_ext VERSION '1.3';
SELECT extversion, (SELECT count(*) FROM pg_temp.functions()) AS functions
  FROM pg_extension WHERE extname = 'queen_ext';
ALTER EXTENSION queen_ext UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'queen_ext';
CALL pg_temp.record('1.3, updated');
DROP EXTENSION queen_ext;
CREATE EXTENSION queen_ext;
SELECT extversion FROM pg_extension WHERE extname = 'queen_ext';
CALL pg_temp.record('fresh');
CREATE TEMP TABLE fresh AS SELECT * FROM pg_temp.functions();
SELECT i.install, count(*) FILTER (WHERE i.kind = 'function') AS functions,
       count(*) FILTER (WHERE i.kind = 'member') AS members,
       (SELECT count(*) FROM (SELECT kind, item FROM installs WHERE install = i.install
                              EXCEPT SELECT kind, item FROM installs WHERE install = 'fresh') x)
     + (SELECT count(*) FROM (SELECT kind, item FROM installs WHERE install = 'fresh'
                              EXCEPT SELECT kind, item FROM installs WHERE install = i.install) x)
       AS differences
  FROM installs i GROUP BY i.install ORDER BY i.install;
-- Updating to the installed version is a no-op.
ALTER EXTENSION queen_ext UPDATE TO '1.4';
SELECT extversion FROM pg_extension WHERE extname = 'queen_ext';

-- 4. Declarations of 1.4: every function commented, C, PARALLEL SAFE.
SELECT function, volatile, strict, parallel, returns_set, language, symbol,
       library = '$libdir/queen_ext' AS in_library, comment IS NOT NULL AS commented
  FROM fresh ORDER BY function;
SELECT function, arguments, result FROM fresh ORDER BY function;
-- Members: the schema and every function; the schema is usable by every role.
SELECT member FROM pg_temp.members() member ORDER BY member;
SELECT has_schema_privilege('public', 'queen_ext', 'USAGE') AS public_usage,
       obj_description('queen_ext'::regnamespace, 'pg_namespace') IS NOT NULL AS schema_commented;
-- version(): the installed version, segment format 1 and the zstd library's version.
SELECT queen_ext.version() ~ ('^queen_ext ' || e.extversion || ' \(segment format 1, zstd [0-9]+\.[0-9]+\.[0-9]+\)$')
       AS version_ok
  FROM pg_extension e WHERE e.extname = 'queen_ext';

-- 5. What CREATE EXTENSION refuses: a second install, another schema, a schema queen_ext
-- that exists already (it would not be the extension's own), an unknown version.
CREATE EXTENSION queen_ext;
\echo :LAST_ERROR_SQLSTATE
DROP EXTENSION queen_ext;
CREATE EXTENSION queen_ext SCHEMA public;
\echo :LAST_ERROR_SQLSTATE
CREATE SCHEMA queen_ext;
CREATE EXTENSION queen_ext;
\echo :LAST_ERROR_SQLSTATE
DROP SCHEMA queen_ext;
CREATE EXTENSION queen_ext VERSION '0.9';
\echo :LAST_ERROR_SQLSTATE

-- 6. DROP EXTENSION without CASCADE removes the functions and the schema (the codec
-- layer's PL/pgSQL functions that call queen_ext record no dependency on it).
CREATE EXTENSION queen_ext;
DROP EXTENSION queen_ext;
SELECT count(*) AS queen_ext_schemas FROM pg_namespace WHERE nspname = 'queen_ext';
SELECT count(*) AS queen_ext_extensions FROM pg_extension WHERE extname = 'queen_ext';
SELECT to_regprocedure('queen_ext.segment_header(bytea)') IS NULL AS functions_gone;
-- The same after updates from 1.0, one version at a time.
CREATE EXTENSION queen_ext VERSION '1.0';
ALTER EXTENSION queen_ext UPDATE TO '1.1';
SELECT to_regprocedure('queen_ext.dedup_probe(bigint[],text[])') IS NULL AS no_keyed_probe_in_1_1;
ALTER EXTENSION queen_ext UPDATE TO '1.2';
ALTER EXTENSION queen_ext UPDATE TO '1.3';
ALTER EXTENSION queen_ext UPDATE TO '1.4';
SELECT extversion FROM pg_extension WHERE extname = 'queen_ext';
DROP EXTENSION queen_ext;
SELECT count(*) AS queen_ext_schemas FROM pg_namespace WHERE nspname = 'queen_ext';

-- Leave the database as this suite found it (later suites expect their codec path).
\if :ext_was_present
CREATE EXTENSION queen_ext;
\endif
