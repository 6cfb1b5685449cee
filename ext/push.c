/* queen_ext.push: the fused push of queen.push (sql/procedures/40_push.sql) in C, under the
 * same contract: arguments, answers, lock order, errors and the rows it writes. This file
 * reads and checks the arguments and renders the answer; ext/push_keys.c orders the keys,
 * ext/push_store.c locks and writes. */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/uuid.h"

#include "ext_convert.h"
#include "ext_push.h"
#include "ext_spi.h"

static ext_statement st_read_committed = {
    "SELECT queen.require_read_committed('push')", 0, {0}, NULL};
static ext_statement st_raise_bad_item = {
    "SELECT queen.segment_pack_raw(now(), $1, $2, $3, $4)", 4,
    {TEXTARRAYOID, UUIDARRAYOID, TEXTARRAYOID, TEXTARRAYOID}, NULL};
static ext_statement st_capacity = {
    "SELECT queen.push_check_capacity($1, $2)", 2, {TEXTARRAYOID, INT4ARRAYOID}, NULL};

/* Deconstructs an array argument (NULL stays NULL with no elements). */
static void
push_elements(ArrayType *a, Oid type, int len, bool byval, char align, Datum **elems,
              bool **nulls, int *n)
{
    *elems = NULL;
    *nulls = NULL;
    *n = 0;
    if (a != NULL)
        deconstruct_array(a, type, len, byval, align, elems, nulls, n);
}

/* Reads the arguments; raises as queen.push does for NULL arrays (22004) and for item
 * arrays of different lengths (22023). */
static void
push_read_args(FunctionCallInfo fcinfo, push_args *a)
{
    int         ntraces, nproducers, npayloads;
    int         i;

    for (i = 0; i < 7; i++)
        if (PG_ARGISNULL(i) && i != 4 && i != 5)
            ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                            errmsg("push: queues, partitions, counts, transaction ids and payloads must not be NULL")));
    a->a_queues = PG_GETARG_ARRAYTYPE_P(0);
    a->a_parts = PG_GETARG_ARRAYTYPE_P(1);
    a->a_counts = PG_GETARG_ARRAYTYPE_P(2);
    a->a_txids = PG_GETARG_ARRAYTYPE_P(3);
    a->a_traces = PG_ARGISNULL(4) ? NULL : PG_GETARG_ARRAYTYPE_P(4);
    a->a_producers = PG_ARGISNULL(5) ? NULL : PG_GETARG_ARRAYTYPE_P(5);
    a->a_payloads = PG_GETARG_ARRAYTYPE_P(6);
    push_elements(a->a_queues, TEXTOID, -1, false, TYPALIGN_INT, &a->queues, &a->queue_nulls,
                  &a->nqueues);
    push_elements(a->a_parts, TEXTOID, -1, false, TYPALIGN_INT, &a->parts, &a->part_nulls,
                  &a->nparts);
    push_elements(a->a_counts, INT4OID, 4, true, TYPALIGN_INT, &a->counts, &a->count_nulls,
                  &a->ncounts);
    push_elements(a->a_txids, TEXTOID, -1, false, TYPALIGN_INT, &a->txids, &a->txid_nulls,
                  &a->n);
    push_elements(a->a_traces, UUIDOID, UUID_LEN, false, TYPALIGN_CHAR, &a->traces,
                  &a->trace_nulls, &ntraces);
    push_elements(a->a_producers, TEXTOID, -1, false, TYPALIGN_INT, &a->producers,
                  &a->producer_nulls, &nproducers);
    push_elements(a->a_payloads, TEXTOID, -1, false, TYPALIGN_INT, &a->payloads,
                  &a->payload_nulls, &npayloads);
    if ((a->a_traces != NULL && ntraces != a->n) ||
        (a->a_producers != NULL && nproducers != a->n) || npayloads != a->n)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("push: item arrays differ in length")));
}

/* Item i's frame (its created_at is set when its partition's clock is known), or false
 * when a field breaks the packer's rules. */
static bool
push_frame(const push_args *a, int i, qseg_frame *f)
{
    size_t      len = 0;

    if (a->txid_nulls[i] || a->payload_nulls[i])
        return false;
    f->txid = ext_text_to_utf8(DatumGetTextPP(a->txids[i]), &len);
    if (len < 1 || len > QSEG_MAX_TXID)
        return false;
    f->txid_len = (uint16) len;
    f->producer = NULL;
    f->producer_len = 0;
    if (a->producers != NULL && !a->producer_nulls[i])
    {
        f->producer = ext_text_to_utf8(DatumGetTextPP(a->producers[i]), &len);
        if (len > QSEG_MAX_PRODUCER)
            return false;
        f->producer_len = (uint16) len;
    }
    f->payload = ext_text_to_utf8(DatumGetTextPP(a->payloads[i]), &len);
    f->payload_len = (uint32) len;  /* a text value is below 1 GB */
    f->trace_id = (a->traces == NULL || a->trace_nulls[i])
        ? NULL : DatumGetUUIDP(a->traces[i])->data;
    f->created_at_us = 0;
    return true;
}

/* An array of n NULLs of a type, for a NULL trace id or producer array. */
static Datum
push_null_array(Oid type, int len, char align, int n)
{
    Datum      *none = palloc0(sizeof(Datum) * Max(n, 1));
    bool       *nulls = palloc(sizeof(bool) * Max(n, 1));
    int         dims[1] = {n};
    int         lbs[1] = {1};

    memset(nulls, true, sizeof(bool) * Max(n, 1));
    return PointerGetDatum(construct_md_array(none, nulls, 1, dims, lbs, type, len, false,
                                              align));
}

/* Lets queen.segment_pack_raw check the items: it raises the stock path's error for the
 * first bad element. Item i is the one push_frame refused, named if the packer does not
 * raise. */
static void pg_attribute_noreturn()
push_raise_bad_item(const push_args *a, int i)
{
    Datum       args[4];

    args[0] = PointerGetDatum(a->a_txids);
    args[1] = a->a_traces != NULL ? PointerGetDatum(a->a_traces)
        : push_null_array(UUIDOID, UUID_LEN, TYPALIGN_CHAR, a->n);
    args[2] = a->a_producers != NULL ? PointerGetDatum(a->a_producers)
        : push_null_array(TEXTOID, -1, TYPALIGN_INT, a->n);
    args[3] = PointerGetDatum(a->a_payloads);
    ext_run(&st_raise_bad_item, args);
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("push: item %d is not a valid message", i + 1)));
}

/* One row per item, in item order. */
static void
push_put_answer(ReturnSetInfo *rsinfo, const push_answer *ans, int n)
{
    Datum       queued = CStringGetTextDatum("queued");
    Datum       duplicate = CStringGetTextDatum("duplicate");
    int         i;

    for (i = 0; i < n; i++)
    {
        Datum       values[5];
        bool        nulls[5] = {false, false, false, false, false};

        values[0] = Int32GetDatum(i + 1);
        values[1] = ans->is_new[i] ? queued : duplicate;
        values[2] = Int64GetDatum(ans->pids[i]);
        values[3] = Int64GetDatum(ans->offsets[i]);
        values[4] = TimestampTzGetDatum(ans->ats[i]);
        nulls[4] = !ans->is_new[i];
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
}

PG_FUNCTION_INFO_V1(queen_ext_push);

/* Stores the items of one fused push exactly as queen.push does and returns one row per
 * item: (item, 'queued' | 'duplicate', partition, offset, createdAt or NULL). */
Datum
queen_ext_push(PG_FUNCTION_ARGS)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    push_args   a;
    push_keys   keys;
    push_answer ans;
    qseg_frame *frames;
    Datum       args[2];
    int         i;

    InitMaterializedSRF(fcinfo, 0);
    push_read_args(fcinfo, &a);
    /* The answer outlives SPI_finish: allocated before SPI_connect. */
    ans.is_new = palloc(sizeof(bool) * Max(a.n, 1));
    ans.pids = palloc(sizeof(int64) * Max(a.n, 1));
    ans.offsets = palloc(sizeof(int64) * Max(a.n, 1));
    ans.ats = palloc(sizeof(TimestampTz) * Max(a.n, 1));

    if (SPI_connect() != SPI_OK_CONNECT)
        elog(ERROR, "push: SPI_connect failed");
    if (XactIsoLevel != XACT_READ_COMMITTED)
        ext_run(&st_read_committed, NULL);

    frames = palloc(sizeof(qseg_frame) * Max(a.n, 1));
    for (i = 0; i < a.n; i++)
        if (!push_frame(&a, i, &frames[i]))
            push_raise_bad_item(&a, i);

    args[0] = PointerGetDatum(a.a_queues);
    args[1] = PointerGetDatum(a.a_counts);
    ext_run(&st_capacity, args);

    push_key_ranges(&a, &keys);
    if (keys.n > 0)
        push_store(&a, &keys, frames, &ans);

    if (SPI_finish() != SPI_OK_FINISH)
        elog(ERROR, "push: SPI_finish failed");
    push_put_answer(rsinfo, &ans, a.n);
    return (Datum) 0;
}
