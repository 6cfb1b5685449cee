-- A shard proxy's hand-written functions are declared as the shard functions they front
-- (queen_proxy.check_hand_written, sql/shards/02_generator.sql): `queen shards init` refuses
-- one declared otherwise (QN409), naming it and both declarations. The shards' declaration
-- is read here from this database's queen.push; the proxy's schema goes into a database of
-- its own.
SELECT pg_get_function_arguments('queen.push'::regproc) AS push_arguments,
       pg_get_function_result('queen.push'::regproc) AS push_result \gset
CREATE DATABASE regress_shard_proxy;
\c regress_shard_proxy
SET client_min_messages = warning;
SET check_function_bodies = off;
\set ECHO none
\getenv proxy_file QUEEN_REGRESS_PROXY_SCHEMA
\i :proxy_file
\set ECHO all
\set VERBOSITY default
-- As the proxy's files declare it, queen.push matches the shards'.
SELECT 'declared alike' AS outcome FROM queen_proxy.check_hand_written('queen.push', :'push_arguments', :'push_result');
-- Shards whose queen.push takes one argument more, or answers otherwise: refused.
SELECT queen_proxy.check_hand_written('queen.push', :'push_arguments' || ', p_extra integer', :'push_result');
SELECT queen_proxy.check_hand_written('queen.push', :'push_arguments', 'SETOF integer');
-- A proxy whose hand-written queen.push lost an argument (planted): refused against the
-- shards' declaration.
DROP FUNCTION queen.push;
CREATE FUNCTION queen.push(p_queues text[]) RETURNS SETOF integer LANGUAGE sql AS 'SELECT 1';
SELECT queen_proxy.check_hand_written('queen.push', :'push_arguments', :'push_result');
-- A hand-written function the proxy lacks: refused.
SELECT queen_proxy.check_hand_written('queen.no_such_function', '', 'integer');
\c regression
DROP DATABASE regress_shard_proxy;
