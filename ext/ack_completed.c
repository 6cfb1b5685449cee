/* queen_ext.ack_completed: queen.ack_completed (sql/procedures/61_ack_completed.sql) in C,
 * under the same contract: a call of completions moves each cursor to the highest acked
 * offset of its live span, with the same answers, locks and row writes.
 *
 * The cursors are locked, read and rewritten by the stock path's statements (kept SPI plans:
 * log_consumers has triggers, so it is only written through SQL); acks by transaction id are
 * resolved by direct probes of the dedup key, and the classification is plain C. */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/itemptr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"
#include "utils/uuid.h"

#include "ext_ack.h"
#include "ext_dedup.h"
#include "ext_spi.h"

static ext_statement st_lock = {
    "SELECT queen.lock_cursors($1, $2)", 2, {TEXTOID, INT8ARRAYOID}, NULL};
/* A statement after the locks: its snapshot sees the cursors as locked. */
static ext_statement st_cursors = {
    "SELECT lc.partition_id, lc.ctid, lc.committed, lc.lease_id, lc.lease_end,"
    "       coalesce(lc.lease_id IS NOT NULL AND lc.lease_expires_at > now(), false), qu.name"
    "  FROM queen.log_consumers lc JOIN queen.queues qu ON qu.id = lc.queue_id"
    " WHERE lc.ctid = ANY ($1)",
    1, {TIDARRAYOID}, NULL};
/* The fused ack's lock: the group's cursors on the partitions that are free to lock now (SKIP
 * LOCKED), in partition order, newest version first, each read as locked (a row updated after
 * the statement's snapshot is locked and read at its newest version). */
static ext_statement st_lock_free = {
    "SELECT c.partition_id, c.tid, c.committed, c.lease_id, c.lease_end,"
    "       coalesce(c.lease_id IS NOT NULL AND c.lease_expires_at > now(), false),"
    "       (SELECT qu.name FROM queen.queues qu WHERE qu.id = c.queue_id)"
    "  FROM (SELECT DISTINCT u.pid FROM unnest($2::bigint[]) AS u(pid) ORDER BY u.pid) k"
    " CROSS JOIN LATERAL ("
    "    SELECT lc.ctid AS tid, lc.partition_id, lc.committed, lc.lease_id, lc.lease_end,"
    "           lc.lease_expires_at, lc.queue_id"
    "      FROM queen.log_consumers lc"
    "     WHERE lc.partition_id = k.pid AND lc.consumer_group = $1"
    "     ORDER BY lc.version DESC LIMIT 1"
    "       FOR UPDATE SKIP LOCKED) c",
    2, {TEXTOID, INT8ARRAYOID}, NULL};
static ext_statement st_find_in_span = {
    "SELECT queen.find_in_span($1, $2, $3, $4)", 4, {INT8OID, INT8OID, INT8OID, TEXTOID}, NULL};
static ext_statement st_past_tombstones = {
    "SELECT queen.past_tombstones($1, $2, $3)", 3, {INT8OID, INT8OID, INT8OID}, NULL};
static ext_statement st_update = {
    "UPDATE queen.log_consumers lc"
    "   SET committed = u.nc,"
    "       attempts = CASE WHEN lc.attempts_offset <= u.nc THEN 0 ELSE lc.attempts END,"
    "       attempts_offset = CASE WHEN lc.attempts_offset <= u.nc THEN 0 ELSE lc.attempts_offset END,"
    "       lease_counted = CASE WHEN u.rel THEN false ELSE lc.lease_counted END,"
    "       lease_id = CASE WHEN u.rel THEN NULL ELSE lc.lease_id END,"
    "       lease_end = CASE WHEN u.rel THEN NULL ELSE lc.lease_end END,"
    "       lease_expires_at = CASE WHEN u.rel THEN NULL ELSE lc.lease_expires_at END,"
    "       retry_at = NULL"
    "  FROM unnest($1::tid[], $2::bigint[], $3::boolean[]) AS u(tid, nc, rel)"
    " WHERE lc.ctid = u.tid",
    3, {TIDARRAYOID, INT8ARRAYOID, BOOLARRAYOID}, NULL};

/* One locked cursor of the group. */
typedef struct ack_cursor
{
    int64       pid;
    ItemPointerData tid;
    int64       committed;
    bool        has_lease;
    pg_uuid_t   lease;
    bool        has_end;
    int64       lease_end;
    bool        live;
    Datum       qname;          /* text, in the caller's memory */
    bool        has_top;        /* the highest acked offset of the live span */
    int64       top;
    int64       new_committed;
    bool        released;
} ack_cursor;

typedef enum ack_state
{
    ACK_UNRESOLVABLE,
    ACK_NOOP,
    ACK_SIGNAL
} ack_state;

/* One ack of the call. */
typedef struct ack_item
{
    int         i;              /* 0-based position */
    bool        has_pid;
    int64       pid;
    int         cursor;         /* index into the cursors, -1 for none */
    bool        has_off;
    int64       off;
    ack_state   state;
} ack_item;

/* The cursor of partition pid in cursors (sorted by pid), or -1. */
static int
ack_find_cursor(const ack_cursor *cursors, int n, int64 pid)
{
    int         lo = 0, hi = n - 1;

    while (lo <= hi)
    {
        int         mid = (lo + hi) / 2;

        if (cursors[mid].pid == pid)
            return mid;
        if (cursors[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static int
ack_cursor_cmp(const void *a, const void *b)
{
    int64       x = ((const ack_cursor *) a)->pid;
    int64       y = ((const ack_cursor *) b)->pid;

    return (x > y) - (x < y);
}

/* Answer order of queen.ack_completed: acks with a cursor first, then by partition (NULL
 * last), then by position. */
static int
ack_item_cmp(const void *a, const void *b)
{
    const ack_item *x = a;
    const ack_item *y = b;

    if ((x->cursor < 0) != (y->cursor < 0))
        return x->cursor < 0 ? 1 : -1;
    if (x->has_pid != y->has_pid)
        return x->has_pid ? -1 : 1;
    if (x->has_pid && x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The cursors in SPI_tuptable (st_cursors' columns), copied into outer, sorted by partition. */
static ack_cursor *
ack_cursors_of_rows(uint64 rows, MemoryContext outer)
{
    ack_cursor *cursors = MemoryContextAllocZero(outer, sizeof(ack_cursor) * Max(rows, 1));
    uint64      r;

    for (r = 0; r < rows; r++)
    {
        ack_cursor *c = &cursors[r];
        bool        isnull;
        Datum       v;
        MemoryContext old;

        c->pid = DatumGetInt64(ext_column(r, 1, &isnull));
        ItemPointerCopy((ItemPointer) DatumGetPointer(ext_column(r, 2, &isnull)), &c->tid);
        c->committed = DatumGetInt64(ext_column(r, 3, &isnull));
        v = ext_column(r, 4, &isnull);
        c->has_lease = !isnull;
        if (!isnull)
            c->lease = *DatumGetUUIDP(v);
        v = ext_column(r, 5, &isnull);
        c->has_end = !isnull;
        c->lease_end = isnull ? 0 : DatumGetInt64(v);
        c->live = DatumGetBool(ext_column(r, 6, &isnull));
        v = ext_column(r, 7, &isnull);
        old = MemoryContextSwitchTo(outer);
        c->qname = isnull ? (Datum) 0 : PointerGetDatum(DatumGetTextPCopy(v));
        MemoryContextSwitchTo(old);
    }
    qsort(cursors, rows, sizeof(ack_cursor), ack_cursor_cmp);
    return cursors;
}

/* Locks and reads the group's cursors on the partitions; returns them sorted by partition. */
static ack_cursor *
ack_read_cursors(Datum group, ArrayType *pids, MemoryContext outer, int *ncursors)
{
    Datum       args[2] = {group, PointerGetDatum(pids)};
    bool        isnull;
    uint64      rows;

    ext_run(&st_lock, args);
    args[0] = ext_column(0, 1, &isnull);
    rows = ext_run(&st_cursors, args);
    *ncursors = (int) rows;
    return ack_cursors_of_rows(rows, outer);
}

struct ext_ack_cursors
{
    int         n;
    ack_cursor *cursors;        /* sorted by partition */
};

ext_ack_cursors *
ext_ack_lock_free_cursors(Datum group, ArrayType *pids)
{
    Datum       args[2] = {group, PointerGetDatum(pids)};
    ext_ack_cursors *locked = palloc(sizeof(ext_ack_cursors));
    uint64      rows = ext_run(&st_lock_free, args);

    locked->n = (int) rows;
    locked->cursors = ack_cursors_of_rows(rows, CurrentMemoryContext);
    return locked;
}

int
ext_ack_locked_count(const ext_ack_cursors *locked)
{
    return locked->n;
}

int64
ext_ack_locked_partition(const ext_ack_cursors *locked, int i)
{
    return locked->cursors[i].pid;
}

/* The locked cursors on the partitions of the call (pids, NULLs skipped), copied into outer:
 * the acks of a fused call write only the cursors of the requests it applies. */
static ack_cursor *
ack_locked_subset(const ext_ack_cursors *locked, const Datum *pids, const bool *pid_nulls, int n,
                  MemoryContext outer, int *ncursors)
{
    bool       *wanted = palloc0(sizeof(bool) * Max(locked->n, 1));
    ack_cursor *cursors = MemoryContextAllocZero(outer, sizeof(ack_cursor) * Max(locked->n, 1));
    int         i, k = 0;

    for (i = 0; i < n; i++)
    {
        int         c;

        if (pid_nulls[i])
            continue;
        c = ack_find_cursor(locked->cursors, locked->n, DatumGetInt64(pids[i]));
        if (c >= 0)
            wanted[c] = true;
    }
    for (i = 0; i < locked->n; i++)
        if (wanted[i])
            cursors[k++] = locked->cursors[i];
    *ncursors = k;
    return cursors;
}

/* Resolves the offset of every ack with a cursor: the given offset, else its dedup row when
 * that offset is committed or inside the live span, else a search of the live span. */
static void
ack_resolve(ack_item *items, int n, const ack_cursor *cursors, const Datum *txids,
            const bool *txid_nulls, const Datum *offsets, const bool *offset_nulls)
{
    Datum      *pids = palloc(sizeof(Datum) * Max(n, 1));
    bool       *skip = palloc(sizeof(bool) * Max(n, 1));
    bool       *found = palloc(sizeof(bool) * Max(n, 1));
    int64      *dd_offsets = palloc(sizeof(int64) * Max(n, 1));
    TimestampTz *dd_ats = palloc(sizeof(TimestampTz) * Max(n, 1));
    int         i;

    for (i = 0; i < n; i++)
    {
        ack_item   *it = &items[i];

        it->has_off = false;
        if (it->cursor >= 0 && !offset_nulls[i])
        {
            it->has_off = true;
            it->off = DatumGetInt64(offsets[i]);
        }
        pids[i] = it->cursor >= 0 ? Int64GetDatum(cursors[it->cursor].pid) : (Datum) 0;
        skip[i] = it->cursor < 0 || !offset_nulls[i];
    }
    CommandCounterIncrement();
    PushActiveSnapshot(GetTransactionSnapshot());
    ext_dedup_probe_pairs(GetActiveSnapshot(), 0, pids, skip, txids, txid_nulls, n, found,
                          dd_offsets, dd_ats);
    PopActiveSnapshot();

    for (i = 0; i < n; i++)
    {
        ack_item   *it = &items[i];
        const ack_cursor *c;

        if (it->cursor < 0 || it->has_off)
            continue;
        c = &cursors[it->cursor];
        if (found[i] && (dd_offsets[i] <= c->committed ||
                         (c->live && c->has_end && dd_offsets[i] <= c->lease_end)))
        {
            it->has_off = true;
            it->off = dd_offsets[i];
        }
        else if (c->live && !txid_nulls[i])
        {
            Datum       args[4];
            bool        isnull;
            Datum       off;

            args[0] = Int64GetDatum(c->pid);
            args[1] = Int64GetDatum(c->committed);
            args[2] = Int64GetDatum(c->lease_end);
            args[3] = txids[i];
            if (!c->has_end)
                continue;
            ext_run(&st_find_in_span, args);
            off = ext_column(0, 1, &isnull);
            it->has_off = !isnull;
            it->off = isnull ? 0 : DatumGetInt64(off);
        }
    }
}

/* Classifies the acks and computes where each cursor moves. */
static void
ack_move(ack_item *items, int n, ack_cursor *cursors, int ncursors, const Datum *leases,
         const bool *lease_nulls)
{
    int         i;

    for (i = 0; i < n; i++)
    {
        ack_item   *it = &items[i];
        ack_cursor *c;

        it->state = ACK_UNRESOLVABLE;
        if (it->cursor < 0 || !it->has_off)
            continue;
        c = &cursors[it->cursor];
        if (it->off <= c->committed)
            it->state = ACK_NOOP;
        else if (c->live && c->has_end && it->off <= c->lease_end &&
                 (lease_nulls[i] ||
                  (c->has_lease && memcmp(DatumGetUUIDP(leases[i])->data, c->lease.data,
                                          UUID_LEN) == 0)))
        {
            it->state = ACK_SIGNAL;
            if (!c->has_top || it->off > c->top)
                c->top = it->off;
            c->has_top = true;
        }
    }
    for (i = 0; i < ncursors; i++)
    {
        ack_cursor *c = &cursors[i];

        /* A commit short of the span end moves over the tombstones that follow it. */
        if (c->live && c->has_top && c->top > c->committed && c->has_end && c->top < c->lease_end)
        {
            Datum       args[3];
            bool        isnull;

            args[0] = Int64GetDatum(c->pid);
            args[1] = Int64GetDatum(c->top);
            args[2] = Int64GetDatum(c->lease_end);
            ext_run(&st_past_tombstones, args);
            c->new_committed = DatumGetInt64(ext_column(0, 1, &isnull));
        }
        else
            c->new_committed = c->has_top ? Max(c->committed, c->top) : c->committed;
        c->released = c->live && c->has_end && c->new_committed >= c->lease_end;
    }
}

/* Rewrites every locked cursor (the stock path's statement, one for all). */
static void
ack_update(const ack_cursor *cursors, int n)
{
    Datum      *tids = palloc(sizeof(Datum) * Max(n, 1));
    Datum      *ncs = palloc(sizeof(Datum) * Max(n, 1));
    Datum      *rels = palloc(sizeof(Datum) * Max(n, 1));
    Datum       args[3];
    int         i;

    if (n == 0)
        return;
    for (i = 0; i < n; i++)
    {
        tids[i] = PointerGetDatum(&cursors[i].tid);
        ncs[i] = Int64GetDatum(cursors[i].new_committed);
        rels[i] = BoolGetDatum(cursors[i].released);
    }
    args[0] = PointerGetDatum(construct_array(tids, n, TIDOID, sizeof(ItemPointerData), false,
                                              TYPALIGN_SHORT));
    args[1] = PointerGetDatum(construct_array(ncs, n, INT8OID, 8, FLOAT8PASSBYVAL,
                                              TYPALIGN_DOUBLE));
    args[2] = PointerGetDatum(construct_array(rels, n, BOOLOID, 1, true, TYPALIGN_CHAR));
    ext_run(&st_update, args);
}

void
ext_ack_completed_apply(Datum group, ArrayType *a_pids, ArrayType *a_txids, ArrayType *a_offsets,
                        ArrayType *a_leases, const ext_ack_cursors *locked, const int *item_numbers,
                        ReturnSetInfo *rsinfo)
{
    MemoryContext outer = CurrentMemoryContext;
    Datum      *pids, *txids, *offsets, *leases;
    bool       *pid_nulls, *txid_nulls, *offset_nulls, *lease_nulls;
    int         n, ntx, noff, nlease, ncursors, i;
    ack_cursor *cursors;
    ack_item   *items;
    Datum       unresolvable = CStringGetTextDatum("unresolvable");

    deconstruct_array(a_pids, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &pids, &pid_nulls, &n);
    deconstruct_array(a_txids, TEXTOID, -1, false, TYPALIGN_INT, &txids, &txid_nulls, &ntx);
    deconstruct_array(a_offsets, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &offsets,
                      &offset_nulls, &noff);
    deconstruct_array(a_leases, UUIDOID, UUID_LEN, false, TYPALIGN_CHAR, &leases, &lease_nulls,
                      &nlease);
    if (ntx != n || noff != n || nlease != n)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("ack: arrays differ in length")));
    items = palloc(sizeof(ack_item) * Max(n, 1));

    if (SPI_connect() != SPI_OK_CONNECT)
        elog(ERROR, "ack_completed: SPI_connect failed");
    cursors = locked != NULL ? ack_locked_subset(locked, pids, pid_nulls, n, outer, &ncursors)
                             : ack_read_cursors(group, a_pids, outer, &ncursors);
    for (i = 0; i < n; i++)
    {
        items[i].i = i;
        items[i].has_pid = !pid_nulls[i];
        items[i].pid = pid_nulls[i] ? 0 : DatumGetInt64(pids[i]);
        items[i].cursor = pid_nulls[i] ? -1
            : ack_find_cursor(cursors, ncursors, DatumGetInt64(pids[i]));
    }
    ack_resolve(items, n, cursors, txids, txid_nulls, offsets, offset_nulls);
    ack_move(items, n, cursors, ncursors, leases, lease_nulls);
    ack_update(cursors, ncursors);
    if (SPI_finish() != SPI_OK_FINISH)
        elog(ERROR, "ack_completed: SPI_finish failed");

    qsort(items, n, sizeof(ack_item), ack_item_cmp);
    for (i = 0; i < n; i++)
    {
        const ack_item *it = &items[i];
        const ack_cursor *c = it->cursor >= 0 ? &cursors[it->cursor] : NULL;
        bool        ok = it->state != ACK_UNRESOLVABLE;
        Datum       values[8];
        bool        nulls[8] = {false, false, false, false, false, false, false, false};

        values[0] = Int32GetDatum(item_numbers != NULL ? item_numbers[it->i] : it->i + 1);
        values[1] = BoolGetDatum(ok);
        values[2] = Int64GetDatum(it->off);
        nulls[2] = !it->has_off;
        values[3] = BoolGetDatum(it->state == ACK_NOOP);
        values[4] = BoolGetDatum(false);
        values[5] = BoolGetDatum(c == NULL || c->released || !c->live);
        values[6] = unresolvable;
        nulls[6] = ok;
        values[7] = c != NULL ? c->qname : (Datum) 0;
        nulls[7] = c == NULL || c->qname == (Datum) 0;
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
}

PG_FUNCTION_INFO_V1(queen_ext_ack_completed);

/* Applies a call of completions as queen.ack_completed does and returns its rows. */
Datum
queen_ext_ack_completed(PG_FUNCTION_ARGS)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

    InitMaterializedSRF(fcinfo, 0);
    if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3) || PG_ARGISNULL(4))
        return (Datum) 0;       /* no acks: queen.ack_completed answers nothing either */
    ext_ack_completed_apply(PG_GETARG_DATUM(0), PG_GETARG_ARRAYTYPE_P(1), PG_GETARG_ARRAYTYPE_P(2),
                            PG_GETARG_ARRAYTYPE_P(3), PG_GETARG_ARRAYTYPE_P(4), NULL, NULL, rsinfo);
    return (Datum) 0;
}
