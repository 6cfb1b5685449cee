/* queen_ext: statements through SPI with kept plans (see ext_spi.h). */
#include "postgres.h"

#include "executor/spi.h"

#include "ext_spi.h"

/* The statement's kept plan, prepared on first use. */
static SPIPlanPtr
ext_plan(ext_statement *st)
{
    SPIPlanPtr  plan;

    if (st->plan != NULL)
        return st->plan;
    plan = SPI_prepare(st->sql, st->nargs, st->argtypes);
    if (plan == NULL)
        elog(ERROR, "queen_ext: SPI_prepare failed (%s) for: %s",
             SPI_result_code_string(SPI_result), st->sql);
    if (SPI_keepplan(plan) != 0)
        elog(ERROR, "queen_ext: SPI_keepplan failed for: %s", st->sql);
    st->plan = plan;
    return plan;
}

uint64
ext_run(ext_statement *st, Datum *args)
{
    return ext_run_nulls(st, args, NULL);
}

uint64
ext_run_nulls(ext_statement *st, Datum *args, const char *nulls)
{
    int         rc = SPI_execute_plan(ext_plan(st), args, nulls, false, 0);

    if (rc < 0)
        elog(ERROR, "queen_ext: SPI_execute_plan failed (%s) for: %s",
             SPI_result_code_string(rc), st->sql);
    return SPI_processed;
}

Portal
ext_open_cursor(ext_statement *st, Datum *args)
{
    Portal      portal = SPI_cursor_open(NULL, ext_plan(st), args, NULL, false);

    if (portal == NULL)
        elog(ERROR, "queen_ext: SPI_cursor_open failed (%s) for: %s",
             SPI_result_code_string(SPI_result), st->sql);
    return portal;
}

Datum
ext_column(uint64 row, int col, bool *isnull)
{
    return SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, isnull);
}
