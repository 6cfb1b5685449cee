/* queen_ext: statements run through SPI with plans prepared once per backend and kept
 * (SPI_prepare + SPI_keepplan). PostgreSQL re-plans a kept plan itself when a table, index
 * or function it uses changes, so a plan survives schema upgrades and DROP/CREATE EXTENSION. */
#ifndef QUEEN_EXT_SPI_H
#define QUEEN_EXT_SPI_H

/* Include after postgres.h. */
#include "executor/spi.h"

#define EXT_PLAN_MAX_ARGS 8

/* One statement: its text and argument types, and its plan once prepared. Declare these
 * static, one per statement. */
typedef struct ext_statement
{
    const char *sql;
    int         nargs;
    Oid         argtypes[EXT_PLAN_MAX_ARGS];
    SPIPlanPtr  plan;           /* NULL until first use */
} ext_statement;

/* Runs the statement (read-write, so it takes a new snapshot in READ COMMITTED and sees
 * everything committed before it starts) with args (no NULLs); the caller is connected to
 * SPI. Returns SPI_processed; the rows are in SPI_tuptable. Errors raised by the statement
 * propagate as they are; an SPI failure raises XX000. */
extern uint64 ext_run(ext_statement *st, Datum *args);

/* As ext_run, with NULL arguments where nulls[i] is 'n' (nulls as SPI_execute_plan takes
 * them; NULL: none). */
extern uint64 ext_run_nulls(ext_statement *st, Datum *args, const char *nulls);

/* Opens the statement as a cursor (read-write, as ext_run) to fetch its rows a few at a
 * time with SPI_cursor_fetch; close it with SPI_cursor_close. */
extern Portal ext_open_cursor(ext_statement *st, Datum *args);

/* Column `col` (1-based) of row `row` of SPI_tuptable as a by-value Datum; *isnull says
 * whether it is NULL. */
extern Datum ext_column(uint64 row, int col, bool *isnull);

#endif
