/* queen_ext.ack_fused: queen.ack_fused (sql/procedures/63_ack_fused.sql) in C, under the same
 * contract: the acks of several requests of one group, each request applied as queen.ack
 * alone would apply it when every cursor it names was free to lock now and no earlier
 * request of the call names the same partition; other requests get no row.
 *
 * The cursors are locked, SKIP LOCKED, by one statement that also reads them (a kept SPI plan);
 * which requests apply is worked out in C; the applied acks are applied in one call:
 * completions only by the C ack of completions directly, on the cursors read under that lock
 * (what queen.ack would do after locking them again), anything else by queen.ack, whose walk
 * handles retries, failures and dead letters. */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"
#include "utils/uuid.h"

#include "ext_ack.h"
#include "ext_spi.h"

static ext_statement st_ack = {
    "SELECT item, success, msg_offset, noop, dlq, lease_released, error, queue_name"
    "  FROM queen.ack($1, $2, $3, $4, $5, $6, $7)",
    7, {TEXTOID, INT8ARRAYOID, TEXTARRAYOID, INT8ARRAYOID, UUIDARRAYOID, TEXTARRAYOID,
        TEXTARRAYOID}, NULL};

#define FUSED_COLUMNS 8

/* One array argument deconstructed; element i of a shorter array reads as NULL, as a
 * subscript past its end does. */
typedef struct fused_array
{
    Datum      *v;
    bool       *null;
    int         n;
} fused_array;

/* Argument argno deconstructed; a NULL array has no elements (each reads as NULL). */
static void
fused_elements(FunctionCallInfo fcinfo, int argno, Oid type, int len, bool byval, char align,
               fused_array *out)
{
    out->v = NULL;
    out->null = NULL;
    out->n = 0;
    if (!PG_ARGISNULL(argno))
        deconstruct_array(PG_GETARG_ARRAYTYPE_P(argno), type, len, byval, align, &out->v,
                          &out->null, &out->n);
}

/* Element i of a, and whether it is NULL. */
static Datum
fused_get(const fused_array *a, int i, bool *isnull)
{
    *isnull = i >= a->n || a->null[i];
    return *isnull ? (Datum) 0 : a->v[i];
}

/* The elements at positions take[0..ntake) of a (positions 0..ntake-1 when take is NULL), as
 * an array of its type. */
static Datum
fused_pick(const fused_array *a, const int *take, int ntake, Oid type, int len, bool byval,
           char align)
{
    Datum      *v = palloc(sizeof(Datum) * Max(ntake, 1));
    bool       *nulls = palloc(sizeof(bool) * Max(ntake, 1));
    int         dims[1] = {ntake};
    int         lbs[1] = {1};
    int         k;

    for (k = 0; k < ntake; k++)
        v[k] = fused_get(a, take != NULL ? take[k] : k, &nulls[k]);
    return PointerGetDatum(construct_md_array(v, nulls, 1, dims, lbs, type, len, byval, align));
}

/* True if pid is among the n sorted locked partitions. */
static bool
fused_locked(const int64 *locked, int n, int64 pid)
{
    int         lo = 0, hi = n - 1;

    while (lo <= hi)
    {
        int         mid = (lo + hi) / 2;

        if (locked[mid] == pid)
            return true;
        if (locked[mid] < pid)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return false;
}

/* qsort's comparator has no argument: the arrays of the acks being sorted. */
static const fused_array *fused_sort_requests;
static const fused_array *fused_sort_pids;
static const int *fused_sort_first;

/* By request number (NULL last), then position. */
static int
fused_by_request(const void *a, const void *b)
{
    int         i = *(const int *) a, j = *(const int *) b;
    bool        inull, jnull;
    int32       x = DatumGetInt32(fused_get(fused_sort_requests, i, &inull));
    int32       y = DatumGetInt32(fused_get(fused_sort_requests, j, &jnull));

    if (inull != jnull)
        return inull ? 1 : -1;
    if (!inull && x != y)
        return x < y ? -1 : 1;
    return (i > j) - (i < j);
}

/* By partition (NULL last), then the first ack of the request. */
static int
fused_by_partition(const void *a, const void *b)
{
    int         i = *(const int *) a, j = *(const int *) b;
    bool        inull, jnull;
    int64       x = DatumGetInt64(fused_get(fused_sort_pids, i, &inull));
    int64       y = DatumGetInt64(fused_get(fused_sort_pids, j, &jnull));

    if (inull != jnull)
        return inull ? 1 : -1;
    if (!inull && x != y)
        return x < y ? -1 : 1;
    return (fused_sort_first[i] > fused_sort_first[j]) - (fused_sort_first[i] < fused_sort_first[j]);
}

/* The positions of the acks to apply, ascending: those of requests that own every partition
 * they name (a partition belongs to the request with the earliest first ack among those
 * naming it) and found all their cursors free. Acks without a request number are always
 * applied, and acks without a partition refuse nothing, as in queen.ack_fused. */
static int *
fused_take(int n, const fused_array *requests, const fused_array *pids, const int64 *locked,
           int nlocked, int *ntake)
{
    int        *order = palloc(sizeof(int) * Max(n, 1));
    int        *first = palloc(sizeof(int) * Max(n, 1));    /* per ack: its request's first ack */
    bool       *refused = palloc0(sizeof(bool) * Max(n, 1));    /* per first ack of a request */
    int        *take = palloc(sizeof(int) * Max(n, 1));
    int         g, k;

    for (k = 0; k < n; k++)
        order[k] = k;
    fused_sort_requests = requests;
    qsort(order, n, sizeof(int), fused_by_request);
    for (g = 0; g < n; g = k)
    {
        bool        gnull;
        int32       req = DatumGetInt32(fused_get(requests, order[g], &gnull));

        for (k = g; k < n; k++)
        {
            bool        knull;
            int32       r = DatumGetInt32(fused_get(requests, order[k], &knull));

            if (knull != gnull || (!gnull && r != req))
                break;
            first[order[k]] = gnull ? -1 : order[g];
        }
    }

    /* Acks with a request, by partition: the first of each partition's run owns it. */
    for (k = 0; k < n; k++)
        order[k] = k;
    fused_sort_pids = pids;
    fused_sort_first = first;
    qsort(order, n, sizeof(int), fused_by_partition);
    for (g = 0; g < n; g = k)
    {
        bool        gnull;
        int64       pid = DatumGetInt64(fused_get(pids, order[g], &gnull));
        int         owner = -1;

        for (k = g; k < n; k++)
        {
            bool        knull;
            int64       p = DatumGetInt64(fused_get(pids, order[k], &knull));
            int         i = order[k];

            if (knull != gnull || (!gnull && p != pid))
                break;
            if (gnull || first[i] < 0)
                continue;
            if (owner < 0)
                owner = first[i];
            if (first[i] != owner || !fused_locked(locked, nlocked, pid))
                refused[first[i]] = true;
        }
    }
    *ntake = 0;
    for (k = 0; k < n; k++)
        if (first[k] < 0 || !refused[first[k]])
            take[(*ntake)++] = k;
    return take;
}

/* Whether every status at positions take[0..ntake) is 'completed' (queen.ack's test for its
 * set-based form: a NULL status is not). */
static bool
fused_all_completed(const fused_array *statuses, const int *take, int ntake)
{
    int         k;

    for (k = 0; k < ntake; k++)
    {
        bool        isnull;
        Datum       st = fused_get(statuses, take[k], &isnull);
        text       *t;

        if (isnull)
            return false;
        t = DatumGetTextPP(st);
        if (VARSIZE_ANY_EXHDR(t) != 9 || memcmp(VARDATA_ANY(t), "completed", 9) != 0)
            return false;
    }
    return true;
}

PG_FUNCTION_INFO_V1(queen_ext_ack_fused);

/* Applies the acks of several requests of a group as queen.ack_fused does and returns its
 * rows (item = the ack's position in the call's arrays). */
Datum
queen_ext_ack_fused(PG_FUNCTION_ARGS)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    fused_array requests, pids, txids, offsets, leases, statuses, errors;
    ext_ack_cursors *cursors;
    int64      *locked;
    int        *take;
    int         n, nlocked, ntake, k;
    uint64      rows, r;
    Datum       args[7];

    InitMaterializedSRF(fcinfo, 0);
    /* The broker always names its group; without one no cursor can be locked. */
    if (PG_ARGISNULL(0))
        return (Datum) 0;
    fused_elements(fcinfo, 1, INT4OID, 4, true, TYPALIGN_INT, &requests);
    fused_elements(fcinfo, 2, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &pids);
    if (!PG_ARGISNULL(1) && !PG_ARGISNULL(2) && requests.n != pids.n)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("ack_fused: arrays differ in length")));
    n = Max(requests.n, pids.n);
    fused_elements(fcinfo, 3, TEXTOID, -1, false, TYPALIGN_INT, &txids);
    fused_elements(fcinfo, 4, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &offsets);
    fused_elements(fcinfo, 5, UUIDOID, UUID_LEN, false, TYPALIGN_CHAR, &leases);
    fused_elements(fcinfo, 6, TEXTOID, -1, false, TYPALIGN_INT, &statuses);
    fused_elements(fcinfo, 7, TEXTOID, -1, false, TYPALIGN_INT, &errors);

    if (SPI_connect() != SPI_OK_CONNECT)
        elog(ERROR, "ack_fused: SPI_connect failed");
    cursors = ext_ack_lock_free_cursors(PG_GETARG_DATUM(0),
                                        DatumGetArrayTypeP(fused_pick(&pids, NULL, n, INT8OID, 8,
                                                                      FLOAT8PASSBYVAL,
                                                                      TYPALIGN_DOUBLE)));
    nlocked = ext_ack_locked_count(cursors);
    locked = palloc(sizeof(int64) * Max(nlocked, 1));
    for (k = 0; k < nlocked; k++)
        locked[k] = ext_ack_locked_partition(cursors, k);    /* in partition order */

    take = fused_take(n, &requests, &pids, locked, nlocked, &ntake);
    if (ntake > 0 && fused_all_completed(&statuses, take, ntake))
    {
        int        *items = palloc(sizeof(int) * ntake);
        bool        all_locked = true;

        /* An ack without a request number applies even when its cursor was busy: then the
         * cursors are locked again, waiting, as queen.ack would. */
        for (k = 0; k < ntake; k++)
        {
            bool        isnull;
            Datum       pid = fused_get(&pids, take[k], &isnull);

            if (!isnull && !fused_locked(locked, nlocked, DatumGetInt64(pid)))
                all_locked = false;
        }

        for (k = 0; k < ntake; k++)
            items[k] = take[k] + 1;
        ext_ack_completed_apply(PG_GETARG_DATUM(0),
                                DatumGetArrayTypeP(fused_pick(&pids, take, ntake, INT8OID, 8,
                                                              FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
                                DatumGetArrayTypeP(fused_pick(&txids, take, ntake, TEXTOID, -1,
                                                              false, TYPALIGN_INT)),
                                DatumGetArrayTypeP(fused_pick(&offsets, take, ntake, INT8OID, 8,
                                                              FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
                                DatumGetArrayTypeP(fused_pick(&leases, take, ntake, UUIDOID,
                                                              UUID_LEN, false, TYPALIGN_CHAR)),
                                all_locked ? cursors : NULL, items, rsinfo);
    }
    else if (ntake > 0)
    {
        args[0] = PG_GETARG_DATUM(0);
        args[1] = fused_pick(&pids, take, ntake, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
        args[2] = fused_pick(&txids, take, ntake, TEXTOID, -1, false, TYPALIGN_INT);
        args[3] = fused_pick(&offsets, take, ntake, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
        args[4] = fused_pick(&leases, take, ntake, UUIDOID, UUID_LEN, false, TYPALIGN_CHAR);
        args[5] = fused_pick(&statuses, take, ntake, TEXTOID, -1, false, TYPALIGN_INT);
        args[6] = fused_pick(&errors, take, ntake, TEXTOID, -1, false, TYPALIGN_INT);
        rows = ext_run(&st_ack, args);
        /* The tuplestore copies each row: it is filled while the SPI rows exist. */
        for (r = 0; r < rows; r++)
        {
            Datum       values[FUSED_COLUMNS];
            bool        nulls[FUSED_COLUMNS];
            int         c;

            for (c = 0; c < FUSED_COLUMNS; c++)
                values[c] = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, c + 1,
                                          &nulls[c]);
            /* item: the ack's position in this call (queen.ack numbers the applied ones). */
            if (!nulls[0])
            {
                int         k = DatumGetInt32(values[0]);

                if (k >= 1 && k <= ntake)
                    values[0] = Int32GetDatum(take[k - 1] + 1);
                else
                    nulls[0] = true;
            }
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
        }
    }
    if (SPI_finish() != SPI_OK_FINISH)
        elog(ERROR, "ack_fused: SPI_finish failed");
    return (Datum) 0;
}
