-- ack_completed.sql again, with queen_ext installed: every call of completions takes the C
-- path (queen_ext.ack_completed) and must give what the stock path gives in ack_completed.out,
-- case for case, while the walk it is compared with in each case stays PL/pgSQL.
SET client_min_messages = warning;
SET track_functions = 'all';
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'queen_ext') AS had_extension \gset
CREATE EXTENSION IF NOT EXISTS queen_ext;
-- pg_regress runs psql in its input directory
\i sql/ack_completed.sql
-- the C path ran
SELECT pg_stat_force_next_flush();
SELECT pg_stat_get_function_calls(
    'queen_ext.ack_completed(text,bigint[],text[],bigint[],uuid[])'::regprocedure) > 0 AS c_ack_called;
-- arrays of different lengths: the C twin refuses them with queen.ack's own words
-- (sql/procedures/60_ack.sql), whoever calls it
\set VERBOSITY terse
SELECT * FROM queen.ack('g', ARRAY[1]::bigint[], ARRAY['a', 'b'], ARRAY[1]::bigint[], ARRAY[NULL]::uuid[],
                        ARRAY['completed'], ARRAY[NULL]);
SELECT * FROM queen_ext.ack_completed('g', ARRAY[1]::bigint[], ARRAY['a', 'b'], ARRAY[1]::bigint[], ARRAY[NULL]::uuid[]);
\set VERBOSITY default
SELECT CASE WHEN NOT :'had_extension' THEN 'DROP EXTENSION queen_ext' END AS restore \gset
\if :{?restore}
:restore;
\endif
