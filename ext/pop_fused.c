/* queen_ext.pop_fused: queen.pop_fused (sql/procedures/56_pop_fused.sql) in C, under the same
 * contract: the same claim walk, spans, leases, cursor writes and answer rows, and the same
 * hand-over to queen.pop_stepwise when a claimed cursor needs a rule applied cursor by cursor.
 *
 * The cursors are claimed and rewritten by the stock path's statements (kept SPI plans:
 * log_consumers has triggers, so it is only written through SQL); the segments are read by
 * direct probes of their primary key, and the spans are computed in plain C. */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "storage/itemptr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/uuid.h"

#include "ext_segments.h"
#include "ext_spi.h"

#define POP_COLUMNS 14

static ext_statement st_register = {
    "SELECT queen.register_group($1, $2, $3)", 3, {TEXTOID, TEXTOID, TIMESTAMPTZOID}, NULL};
static ext_statement st_queue = {
    "SELECT qu.id, qu.lease_time, qu.delayed_processing, qu.window_buffer,"
    "       qu.max_wait_time_seconds, queen.claim_floor(qu.id, $2), r.current"
    "  FROM queen.queues qu CROSS JOIN queen.group_registration_current($1, $2) r"
    " WHERE qu.name = $1",
    2, {TEXTOID, TEXTOID}, NULL};
/* queen.pop_fused's claim query, for every request's partitions at once. */
static ext_statement st_claim = {
    "SELECT lc.partition_id, lc.committed, lc.lease_id IS NOT NULL, lc.delivered_to,"
    "       h.last_offset, lc.ctid,"
    "       (SELECT pt.name FROM queen.log_partitions pt WHERE pt.id = lc.partition_id)"
    "  FROM queen.log_consumers lc"
    " CROSS JOIN LATERAL queen.partition_head(lc.partition_id) h"
    " WHERE lc.queue_id = $1"
    "   AND lc.consumer_group = $2"
    "   AND lc.ready_at IS NOT NULL"
    "   AND lc.ready_at >= $3"
    "   AND h.last_offset > lc.committed"
    "   AND (lc.lease_id IS NULL OR lc.lease_expires_at <= now())"
    "   AND (lc.retry_at IS NULL OR lc.retry_at <= now())"
    "   AND ($4 = 0 OR h.last_created_at <= now() - make_interval(secs => $4))"
    " ORDER BY lc.ready_at, lc.partition_id"
    " LIMIT $5"
    "   FOR UPDATE OF lc SKIP LOCKED",
    5, {INT8OID, TEXTOID, TIMESTAMPTZOID, INT4OID, INT8OID}, NULL};
static ext_statement st_tombstones = {
    "SELECT EXISTS (SELECT 1 FROM unnest($1::bigint[], $2::bigint[]) AS u(pid, committed)"
    "                WHERE EXISTS (SELECT 1 FROM queen.message_tombstones t"
    "                               WHERE t.partition_id = u.pid AND t.msg_offset > u.committed))",
    2, {INT8ARRAYOID, INT8ARRAYOID}, NULL};
static ext_statement st_update = {
    "UPDATE queen.log_consumers lc"
    "   SET committed = u.done,"
    "       attempts = CASE WHEN lc.attempts_offset <= u.done THEN 0 ELSE lc.attempts END,"
    "       attempts_offset = CASE WHEN lc.attempts_offset <= u.done THEN 0 ELSE lc.attempts_offset END,"
    "       lease_id = u.lease,"
    "       lease_start = CASE WHEN u.got AND NOT $6 THEN u.done END,"
    "       lease_end = CASE WHEN u.got AND NOT $6 THEN u.fin END,"
    "       lease_expires_at = CASE WHEN u.got AND NOT $6 THEN now() + make_interval(secs => $7) END,"
    "       lease_counted = false,"
    "       retry_at = CASE WHEN u.got THEN NULL ELSE lc.retry_at END,"
    "       last_claimed_at = CASE WHEN u.got THEN now() ELSE lc.last_claimed_at END,"
    "       delivered_to = CASE WHEN u.got THEN greatest(lc.delivered_to, u.fin) ELSE lc.delivered_to END"
    "  FROM unnest($1::tid[], $2::uuid[], $3::bigint[], $4::bigint[], $5::boolean[])"
    "       AS u(tid, lease, done, fin, got)"
    " WHERE lc.ctid = u.tid",  /* the versions locked by the claim (51_cursor_versions.sql) */
    7, {TIDARRAYOID, UUIDARRAYOID, INT8ARRAYOID, INT8ARRAYOID, BOOLARRAYOID, BOOLOID, INT4OID},
    NULL};
static ext_statement st_stepwise = {
    "SELECT * FROM queen.pop_stepwise($1, NULL, $2, $3, $4, $5, $6, $7)", 7,
    {TEXTOID, TEXTOID, INT4OID, INT4OID, BOOLOID, BOOLOID, TIMESTAMPTZOID}, NULL};

/* The call's arguments. */
typedef struct pop_args
{
    Datum       queue;
    Datum       group;
    int         n;              /* requests */
    int32      *batches;
    int32      *max_parts;
    bool        auto_ack;
    bool        subscribe_all;
    bool        has_subscription_at;
    TimestampTz subscription_at;
} pop_args;

/* A cursor the claim locked, in claim order. */
typedef struct pop_cursor
{
    int         req;            /* 0-based request */
    int64       pid;
    int64       committed;
    bool        leased;         /* it carried a lease (expired: the claim admits no other) */
    int64       delivered;
    int64       last;
    ItemPointerData tid;
    Datum       name;           /* text, in the caller's memory */
    int64       start;          /* the span (start, fin] */
    int64       fin;
} pop_cursor;

/* The elements of a batch or partition-count array; raises 22023 for a NULL or one below 1. */
static int32 *
pop_counts(ArrayType *arr)
{
    Datum      *elems;
    bool       *nulls;
    int         n, i;
    int32      *out;

    deconstruct_array(arr, INT4OID, 4, true, TYPALIGN_INT, &elems, &nulls, &n);
    out = palloc(sizeof(int32) * Max(n, 1));
    for (i = 0; i < n; i++)
    {
        if (nulls[i] || DatumGetInt32(elems[i]) < 1)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("pop: batch and partitions must be at least 1")));
        out[i] = DatumGetInt32(elems[i]);
    }
    return out;
}

/* Reads the arguments; raises as queen.pop_fused does (22023) for request arrays of
 * different lengths and batches or partition counts below 1, 22004 for a NULL name. */
static void
pop_read_args(FunctionCallInfo fcinfo, pop_args *a)
{
    ArrayType  *batches = PG_ARGISNULL(2) ? NULL : PG_GETARG_ARRAYTYPE_P(2);
    ArrayType  *max_parts = PG_ARGISNULL(3) ? NULL : PG_GETARG_ARRAYTYPE_P(3);
    int         nb = batches == NULL ? 0 : ArrayGetNItems(ARR_NDIM(batches), ARR_DIMS(batches));
    int         nm = max_parts == NULL ? 0 : ArrayGetNItems(ARR_NDIM(max_parts), ARR_DIMS(max_parts));

    if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("pop: queue and consumer group must not be NULL")));
    a->queue = PG_GETARG_DATUM(0);
    a->group = PG_GETARG_DATUM(1);
    if (nb == 0 || nb != nm)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("pop_fused: one batch and one partition count per request")));
    a->n = nb;
    a->batches = pop_counts(batches);
    a->max_parts = pop_counts(max_parts);
    /* As in PL/pgSQL, a NULL flag counts as false. */
    a->auto_ack = !PG_ARGISNULL(4) && PG_GETARG_BOOL(4);
    a->subscribe_all = !PG_ARGISNULL(5) && PG_GETARG_BOOL(5);
    a->has_subscription_at = !PG_ARGISNULL(6);
    a->subscription_at = a->has_subscription_at ? PG_GETARG_TIMESTAMPTZ(6) : 0;
}

/* queen.register_group(queue, group, start): start is NULL from the beginning, else the
 * subscription time, now() when none is given. */
static void
pop_register_group(const pop_args *a)
{
    Datum       args[3] = {a->queue, a->group, (Datum) 0};
    char        nulls[4] = "   ";

    if (a->subscribe_all)
        nulls[2] = 'n';
    else
        args[2] = TimestampTzGetDatum(a->has_subscription_at ? a->subscription_at
                                      : GetCurrentTransactionStartTimestamp());
    ext_run_nulls(&st_register, args, nulls);
}

/* Claims cursors in claim order until each request in turn has its batch covered or its
 * partitions, as queen.pop_fused's claim loop does; cut[r] is set for a request whose claim
 * stopped on its cover count. Returns the cursors, allocated in `outer`. */
static pop_cursor *
pop_claim(const pop_args *a, int64 queue_id, TimestampTz floor, int32 window_buffer,
          MemoryContext outer, int *ncursors, bool *cut)
{
    Datum       args[5];
    Portal      portal;
    int64       slots = 0;
    int         cap = 16, n = 0, req = 0, taken = 0;
    int64       cover = 0;
    pop_cursor *cs = MemoryContextAlloc(outer, sizeof(pop_cursor) * cap);
    int         i;

    for (i = 0; i < a->n; i++)
        slots += a->max_parts[i];
    args[0] = Int64GetDatum(queue_id);
    args[1] = a->group;
    args[2] = TimestampTzGetDatum(floor);
    args[3] = Int32GetDatum(window_buffer);
    args[4] = Int64GetDatum(slots);
    portal = ext_open_cursor(&st_claim, args);
    /* One row at a time, so the call does not lock cursors it will not hand out. */
    for (;;)
    {
        pop_cursor *c;
        bool        isnull;
        MemoryContext old;

        SPI_cursor_fetch(portal, true, 1);
        if (SPI_processed == 0)
            break;
        if (n == cap)
        {
            cap *= 2;
            cs = repalloc(cs, sizeof(pop_cursor) * cap);
        }
        c = &cs[n++];
        c->req = req;
        c->pid = DatumGetInt64(ext_column(0, 1, &isnull));
        c->committed = DatumGetInt64(ext_column(0, 2, &isnull));
        c->leased = DatumGetBool(ext_column(0, 3, &isnull));
        c->delivered = DatumGetInt64(ext_column(0, 4, &isnull));
        c->last = DatumGetInt64(ext_column(0, 5, &isnull));
        ItemPointerCopy((ItemPointer) DatumGetPointer(ext_column(0, 6, &isnull)), &c->tid);
        old = MemoryContextSwitchTo(outer);
        {
            Datum       name = ext_column(0, 7, &isnull);

            c->name = isnull ? (Datum) 0 : PointerGetDatum(DatumGetTextPCopy(name));
        }
        MemoryContextSwitchTo(old);
        SPI_freetuptable(SPI_tuptable);
        cover += c->last - c->committed;
        taken++;
        if (cover >= a->batches[req] || taken >= a->max_parts[req])
        {
            cut[req] = taken < a->max_parts[req];
            req++;
            cover = 0;
            taken = 0;
            if (req >= a->n)
                break;
        }
    }
    SPI_cursor_close(portal);
    *ncursors = n;
    return cs;
}

/* An int8[] of one field of the cursors. */
static Datum
pop_int8_array(const pop_cursor *cs, int n, bool committed)
{
    Datum      *v = palloc(sizeof(Datum) * Max(n, 1));
    int         i;

    for (i = 0; i < n; i++)
        v[i] = Int64GetDatum(committed ? cs[i].committed : cs[i].pid);
    return PointerGetDatum(construct_array(v, n, INT8OID, 8, true, TYPALIGN_DOUBLE));
}

/* Whether a claimed cursor has tombstones past its committed offset. */
static bool
pop_any_tombstones(const pop_cursor *cs, int n)
{
    Datum       args[2] = {pop_int8_array(cs, n, false), pop_int8_array(cs, n, true)};
    bool        isnull;

    ext_run(&st_tombstones, args);
    return DatumGetBool(ext_column(0, 1, &isnull));
}

/* Each cursor's span, as queen.pop_fused computes it: from its committed offset (or past the
 * segments retention removed) through what is left of its request's batch after the cursors
 * that request took before it. Cursors past their request's batch are dropped; returns how
 * many are kept (compacted to the front, in claim order). */
static int
pop_spans(const pop_args *a, pop_cursor *cs, int n)
{
    ext_segment_reader r;
    int64       before = 0;
    int         prev_req = -1, kept = 0, i;

    CommandCounterIncrement();
    PushActiveSnapshot(GetTransactionSnapshot());
    ext_segment_reader_begin(&r, GetActiveSnapshot(), "pop");
    for (i = 0; i < n; i++)
    {
        pop_cursor *c = &cs[i];
        int64       first, last;
        int16       codec;

        ext_segment_reader_seek(&r, c->pid, c->committed);
        if (ext_segment_reader_next(&r, &first, &last, &codec, NULL))
            c->start = Max(c->committed, first - 1);
        else
            c->start = Max(c->committed, c->last);
        if (c->req != prev_req)
        {
            prev_req = c->req;
            before = 0;
        }
        if (before < a->batches[c->req])
        {
            c->fin = Min(c->last, c->start + (a->batches[c->req] - before));
            cs[kept++] = *c;
        }
        before += c->last - c->start;
    }
    ext_segment_reader_end(&r);
    PopActiveSnapshot();
    return kept;
}

/* Whether a request whose claim stopped on its count got less than its batch (retention
 * removed some of what it counted): queen.pop_stepwise runs another claim round for it. */
static bool
pop_needs_another_round(const pop_args *a, const pop_cursor *cs, int n, const bool *cut)
{
    int         r, i;

    for (r = 0; r < a->n; r++)
    {
        int64       got = 0;

        if (!cut[r])
            continue;
        for (i = 0; i < n; i++)
            if (cs[i].req == r && cs[i].fin > cs[i].start)
                got += cs[i].fin - cs[i].start;
        if (got < a->batches[r])
            return true;
    }
    return false;
}

/* A new lease id for a request that may claim up to max_parts partitions, as
 * queen.new_lease_id makes it (sql/procedures/54_lease_ids.sql, which defines the format):
 * random; on a shard (the setting queen.lease_shards holds its mask) version 8 with the mask
 * of the shards its cursors may be on in its last 32 bits, every shard's when max_parts > 1;
 * elsewhere version 4, as gen_random_uuid() makes it. */
static void
pop_new_lease_id(pg_uuid_t *u, int32 max_parts)
{
    const char *mask = GetConfigOption("queen.lease_shards", true, false);
    uint32      bits;
    int         i;

    if (!pg_strong_random(u->data, UUID_LEN))
        ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                        errmsg("pop: could not generate a random lease id")));
    u->data[8] = (u->data[8] & 0x3f) | 0x80;
    if (mask == NULL || strlen(mask) != 8 || strspn(mask, "0123456789abcdef") != 8)
    {
        u->data[6] = (u->data[6] & 0x0f) | 0x40;
        return;
    }
    bits = max_parts > 1 ? 0xffffffffu : (uint32) strtoul(mask, NULL, 16);
    u->data[6] = (u->data[6] & 0x0f) | 0x80;
    for (i = 0; i < 4; i++)
        u->data[12 + i] = (uint8) (bits >> (8 * (3 - i)));
}

/* Writes the spans: each kept cursor committed (past its span under auto_ack), leased with
 * its request's lease when its span is not empty, as queen.pop_fused's UPDATE. */
static void
pop_write_cursors(const pop_args *a, const pop_cursor *cs, int n, const pg_uuid_t *leases,
                  int32 lease_time)
{
    Datum      *tids = palloc(sizeof(Datum) * n);
    Datum      *lids = palloc(sizeof(Datum) * n);
    bool       *lid_nulls = palloc(sizeof(bool) * n);
    Datum      *done = palloc(sizeof(Datum) * n);
    Datum      *fins = palloc(sizeof(Datum) * n);
    Datum      *got = palloc(sizeof(Datum) * n);
    Datum       args[7];
    int         dims[1] = {n};
    int         lbs[1] = {1};
    int         i;

    for (i = 0; i < n; i++)
    {
        bool        g = cs[i].fin > cs[i].start;

        tids[i] = PointerGetDatum(&cs[i].tid);
        lid_nulls[i] = !g || a->auto_ack;
        lids[i] = lid_nulls[i] ? (Datum) 0 : UUIDPGetDatum(&leases[cs[i].req]);
        done[i] = Int64GetDatum(a->auto_ack && g ? cs[i].fin : cs[i].start);
        fins[i] = Int64GetDatum(cs[i].fin);
        got[i] = BoolGetDatum(g);
    }
    args[0] = PointerGetDatum(construct_array(tids, n, TIDOID, sizeof(ItemPointerData), false,
                                              TYPALIGN_SHORT));
    args[1] = PointerGetDatum(construct_md_array(lids, lid_nulls, 1, dims, lbs, UUIDOID, UUID_LEN,
                                                 false, TYPALIGN_CHAR));
    args[2] = PointerGetDatum(construct_array(done, n, INT8OID, 8, true, TYPALIGN_DOUBLE));
    args[3] = PointerGetDatum(construct_array(fins, n, INT8OID, 8, true, TYPALIGN_DOUBLE));
    args[4] = PointerGetDatum(construct_array(got, n, BOOLOID, 1, true, TYPALIGN_CHAR));
    args[5] = BoolGetDatum(a->auto_ack);
    args[6] = Int32GetDatum(lease_time);
    ext_run(&st_update, args);
}

/* The answer: one row per segment overlapping a non-empty span, in claim order then offset
 * order, then each request's counts row when it handed out offsets again. */
static void
pop_put_answer(ReturnSetInfo *rsinfo, const pop_args *a, const pop_cursor *cs, int n,
               const pg_uuid_t *leases, MemoryContext per_row)
{
    ext_segment_reader r;
    int         i;

    CommandCounterIncrement();
    PushActiveSnapshot(GetTransactionSnapshot());
    ext_segment_reader_begin(&r, GetActiveSnapshot(), "pop");
    for (i = 0; i < n; i++)
    {
        const pop_cursor *c = &cs[i];
        int64       first, last;
        int16       codec;
        bytea      *body;

        if (c->fin <= c->start)
            continue;
        /* The segments with last_offset in (start, top], top the first one's holding fin, that
         * begin at or before fin. */
        ext_segment_reader_seek(&r, c->pid, c->start);
        for (;;)
        {
            MemoryContext old = MemoryContextSwitchTo(per_row);
            bool        more = ext_segment_reader_next(&r, &first, &last, &codec, &body);

            MemoryContextSwitchTo(old);
            if (!more)
                break;
            if (first <= c->fin)
            {
                Datum       values[POP_COLUMNS];
                bool        nulls[POP_COLUMNS];

                memset(nulls, true, sizeof(nulls));
                values[0] = Int32GetDatum(c->req + 1);
                values[1] = Int64GetDatum(c->pid);
                values[2] = c->name;
                values[3] = a->auto_ack ? (Datum) 0 : UUIDPGetDatum(&leases[c->req]);
                values[4] = Int64GetDatum(c->start);
                values[5] = Int64GetDatum(c->fin);
                values[6] = Int64GetDatum(first);
                values[7] = Int16GetDatum(codec);
                values[8] = PointerGetDatum(body);
                nulls[0] = nulls[1] = nulls[4] = nulls[5] = nulls[6] = nulls[7] = nulls[8] = false;
                nulls[2] = c->name == (Datum) 0;
                nulls[3] = a->auto_ack;
                tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
            }
            MemoryContextReset(per_row);
            if (last >= c->fin)
                break;
        }
    }
    ext_segment_reader_end(&r);
    PopActiveSnapshot();

    for (i = 0; i < a->n; i++)
    {
        int64       again = 0;
        bool        any = false;
        int         k;

        for (k = 0; k < n; k++)
            if (cs[k].req == i && cs[k].fin > cs[k].start && cs[k].delivered > cs[k].start)
            {
                any = true;
                again += Min(cs[k].fin, cs[k].delivered) - cs[k].start;
            }
        if (any)
        {
            Datum       values[POP_COLUMNS];
            bool        nulls[POP_COLUMNS];

            memset(values, 0, sizeof(values));
            memset(nulls, true, sizeof(nulls));
            values[0] = Int32GetDatum(i + 1);
            values[10] = Int32GetDatum(0);
            values[11] = Int64GetDatum(again);
            values[12] = Int32GetDatum(0);
            values[13] = Int64GetDatum(0);
            nulls[0] = nulls[10] = nulls[11] = nulls[12] = nulls[13] = false;
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
        }
    }
}

/* Each request as queen.pop_stepwise alone, in request order, in this transaction (the
 * cursors this call holds do not block it); its rows tagged with the request. */
static void
pop_stepwise(ReturnSetInfo *rsinfo, const pop_args *a)
{
    int         i;

    for (i = 0; i < a->n; i++)
    {
        Datum       args[7];
        char        nulls[8] = "       ";
        uint64      rows, row;

        args[0] = a->queue;
        args[1] = a->group;
        args[2] = Int32GetDatum(a->batches[i]);
        args[3] = Int32GetDatum(a->max_parts[i]);
        args[4] = BoolGetDatum(a->auto_ack);
        args[5] = BoolGetDatum(a->subscribe_all);
        args[6] = TimestampTzGetDatum(a->subscription_at);
        if (!a->has_subscription_at)
            nulls[6] = 'n';
        rows = ext_run_nulls(&st_stepwise, args, nulls);
        for (row = 0; row < rows; row++)
        {
            Datum       values[POP_COLUMNS];
            bool        isnull[POP_COLUMNS];
            int         col;

            values[0] = Int32GetDatum(i + 1);
            isnull[0] = false;
            for (col = 1; col < POP_COLUMNS; col++)
                values[col] = ext_column(row, col, &isnull[col]);
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
        }
        SPI_freetuptable(SPI_tuptable);
    }
}

PG_FUNCTION_INFO_V1(queen_ext_pop_fused);

/* Several queue-wide pops of one group in one call, exactly as queen.pop_fused: one claim
 * walk hands the claimable cursors to the requests in claim order; rows as queen.pop's,
 * each tagged with its request. */
Datum
queen_ext_pop_fused(PG_FUNCTION_ARGS)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    MemoryContext outer;
    MemoryContext per_row;
    pop_args    a;
    pop_cursor *cs = NULL;
    bool       *cut;
    pg_uuid_t  *leases;
    int         n = 0;
    bool        stepwise = true;
    bool        isnull;
    bool        found;
    bool        registered = false;
    int64       queue_id;
    int32       lease_time, delayed, window_buffer, max_wait;
    TimestampTz floor;
    int         i;

    InitMaterializedSRF(fcinfo, 0);
    pop_read_args(fcinfo, &a);
    outer = CurrentMemoryContext;
    cut = palloc0(sizeof(bool) * a.n);
    leases = palloc(sizeof(pg_uuid_t) * a.n);
    per_row = AllocSetContextCreate(outer, "queen_ext pop row", ALLOCSET_DEFAULT_SIZES);

    if (SPI_connect() != SPI_OK_CONNECT)
        elog(ERROR, "pop: SPI_connect failed");
    /* The queue, and whether the group's registration is current (the common case: one
     * statement); when it is not, queen.register_group, then the queue read again (its claim
     * floor may have been reset). */
    for (;;)
    {
        found = ext_run(&st_queue, (Datum[]) {a.queue, a.group}) > 0;
        if (registered || (found && DatumGetBool(ext_column(0, 7, &isnull))))
            break;
        pop_register_group(&a);
        registered = true;
    }
    if (!found)
    {
        SPI_finish();
        return (Datum) 0;
    }
    queue_id = DatumGetInt64(ext_column(0, 1, &isnull));
    lease_time = DatumGetInt32(ext_column(0, 2, &isnull));
    delayed = DatumGetInt32(ext_column(0, 3, &isnull));
    window_buffer = DatumGetInt32(ext_column(0, 4, &isnull));
    max_wait = DatumGetInt32(ext_column(0, 5, &isnull));
    floor = DatumGetTimestampTz(ext_column(0, 6, &isnull));

    if (max_wait == 0 && delayed == 0)
    {
        cs = pop_claim(&a, queue_id, floor, window_buffer, outer, &n, cut);
        if (n == 0)
        {
            SPI_finish();
            return (Datum) 0;   /* nothing claimable for any request */
        }
        stepwise = false;
        for (i = 0; i < n && !stepwise; i++)
            stepwise = cs[i].leased;
        if (!stepwise)
            stepwise = pop_any_tombstones(cs, n);
        if (!stepwise)
        {
            n = pop_spans(&a, cs, n);
            stepwise = pop_needs_another_round(&a, cs, n, cut);
        }
    }
    if (stepwise)
        pop_stepwise(rsinfo, &a);
    else
    {
        for (i = 0; i < a.n; i++)
            pop_new_lease_id(&leases[i], a.max_parts[i]);
        pop_write_cursors(&a, cs, n, leases, lease_time);
        pop_put_answer(rsinfo, &a, cs, n, leases, per_row);
    }
    if (SPI_finish() != SPI_OK_FINISH)
        elog(ERROR, "pop: SPI_finish failed");
    return (Datum) 0;
}
