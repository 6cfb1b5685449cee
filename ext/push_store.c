/* queen_ext: the stored part of the fused push, from the partition lookup to the cursors'
 * readiness, as queen.push does it (sql/procedures/40_push.sql): the same statements for
 * the locks and the rows (kept SPI plans, a fixed number per call), a direct B-tree probe of
 * the dedup index, and the offsets and segments computed in C. */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "ext_convert.h"
#include "ext_dedup.h"
#include "ext_head.h"
#include "ext_insert.h"
#include "ext_pack.h"
#include "ext_push.h"
#include "ext_spi.h"

/* Segments are packed as queen.pack_segment packs them with queen_ext. */
#define PUSH_CODEC EXT_CODEC_AUTO
#define PUSH_LEVEL 1
#define PUSH_LOCK_ATTEMPTS 3
/* The codec byte of a segment header (docs/segment-format.md). */
#define PUSH_HEADER_CODEC_BYTE 5

/* One lookup per key on both columns of the partition key: a join would keep a plan made
 * while the queue had few partitions (40_push.sql). */
static ext_statement st_lookup = {
    "SELECT (SELECT pt.id FROM queen.log_partitions pt"
    "         WHERE pt.queue_id = (SELECT q.id FROM queen.queues q WHERE q.name = u.queue)"
    "           AND pt.name = u.part)"
    "  FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(queue, part, o) ORDER BY u.o",
    2, {TEXTARRAYOID, TEXTARRAYOID}, NULL};
static ext_statement st_claim_floors = {
    "SELECT queen.lock_claim_floors_shared($1)", 1, {TEXTARRAYOID}, NULL};
static ext_statement st_ensure = {
    "SELECT queen.ensure_partition(queen.ensure_queue($1), $2)", 2, {TEXTOID, TEXTOID}, NULL};
/* One statement locks every key's row, in the order of its ORDER BY: the lock order. A
 * locked row is the newest version, so its floors (32_partition_head.sql) are current. */
static ext_statement st_lock = {
    "SELECT u.o, q.dedup_window_seconds, pt.last_offset, pt.last_created_at"
    "  FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, o)"
    "  JOIN queen.log_partitions pt ON pt.id = u.id"
    "  JOIN queen.queues q ON q.id = pt.queue_id"
    " ORDER BY u.o FOR UPDATE OF pt",
    1, {INT8ARRAYOID}, NULL};
static ext_statement st_relookup = {
    "SELECT pt.id FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, o)"
    "  LEFT JOIN queen.log_partitions pt ON pt.id = u.id ORDER BY u.o",
    1, {INT8ARRAYOID}, NULL};
static ext_statement st_segments = {
    "INSERT INTO queen.log_segments (partition_id, first_offset, last_offset, codec, created_at, body)"
    " SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::smallint[],"
    "                      $5::timestamptz[], $6::bytea[])",
    6, {INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT2ARRAYOID, TIMESTAMPTZARRAYOID,
        BYTEAARRAYOID}, NULL};
/* Ids the probe did not find. Every writer of a partition's dedup rows holds its row lock, and
 * the probe's snapshot was taken after this push got it, so no conflicting row can exist: a
 * plain insert, without ON CONFLICT's second probe of the index. */
static ext_statement st_dedup_new = {
    "INSERT INTO queen.log_dedup (partition_id, transaction_id, msg_offset, created_at)"
    " SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::timestamptz[])",
    4, {INT8ARRAYOID, TEXTARRAYOID, INT8ARRAYOID, TIMESTAMPTZARRAYOID}, NULL};
/* Ids whose row left the window are stored again: the conflict rewrites the old row (which
 * housekeeping may be deleting meanwhile). */
static ext_statement st_dedup_again = {
    "INSERT INTO queen.log_dedup AS d (partition_id, transaction_id, msg_offset, created_at)"
    " SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::timestamptz[])"
    " ON CONFLICT (partition_id, transaction_id)"
    " DO UPDATE SET msg_offset = EXCLUDED.msg_offset, created_at = EXCLUDED.created_at",
    4, {INT8ARRAYOID, TEXTARRAYOID, INT8ARRAYOID, TIMESTAMPTZARRAYOID}, NULL};
static ext_statement st_mark_ready = {
    "SELECT queen.mark_ready($1, $2)", 2, {INT8ARRAYOID, TIMESTAMPTZARRAYOID}, NULL};

/* A one-dimensional array of n by-value 8-byte elements (bigint, timestamptz). */
static Datum
push_int8_array(const int64 *values, int n, Oid type)
{
    Datum      *d = palloc(sizeof(Datum) * Max(n, 1));
    int         i;

    for (i = 0; i < n; i++)
        d[i] = Int64GetDatum(values[i]);
    return PointerGetDatum(construct_array(d, n, type, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* The keys' partition ids as a bigint[]. */
static Datum
push_pid_array(const push_keys *keys)
{
    int64      *pids = palloc(sizeof(int64) * keys->n);
    int         i;

    for (i = 0; i < keys->n; i++)
        pids[i] = keys->k[i].pid;
    return push_int8_array(pids, keys->n, INT8OID);
}

/* Sets every key's pid from column 1 of the last statement's rows (0 for NULL). */
static void
push_read_pids(push_keys *keys, uint64 rows)
{
    int         i;

    if (rows != (uint64) keys->n)
        elog(ERROR, "push: partition lookup returned " UINT64_FORMAT " rows for %d keys", rows,
             keys->n);
    for (i = 0; i < keys->n; i++)
    {
        bool        isnull;
        Datum       pid = ext_column(i, 1, &isnull);

        keys->k[i].pid = isnull ? 0 : DatumGetInt64(pid);
    }
}

/* Finds the keys' partitions, creating the missing ones, and locks their rows in lock
 * order after the queues' claim-floor locks; sets pid and win of every key. */
static void
push_lock_partitions(push_keys *keys)
{
    Datum      *queues = palloc(sizeof(Datum) * keys->n);
    Datum      *parts = palloc(sizeof(Datum) * keys->n);
    Datum       args[2];
    int         attempt, i;

    for (i = 0; i < keys->n; i++)
    {
        queues[i] = keys->k[i].queue;
        parts[i] = keys->k[i].part;
    }
    args[0] = PointerGetDatum(construct_array(queues, keys->n, TEXTOID, -1, false, TYPALIGN_INT));
    args[1] = PointerGetDatum(construct_array(parts, keys->n, TEXTOID, -1, false, TYPALIGN_INT));
    push_read_pids(keys, ext_run(&st_lookup, args));
    ext_run(&st_claim_floors, args);

    for (attempt = 1;; attempt++)
    {
        uint64      locked;
        uint64      r;

        for (i = 0; i < keys->n; i++)
            if (keys->k[i].pid == 0)
            {
                bool        isnull;

                args[0] = keys->k[i].queue;
                args[1] = keys->k[i].part;
                ext_run(&st_ensure, args);
                keys->k[i].pid = DatumGetInt64(ext_column(0, 1, &isnull));
            }
        args[0] = push_pid_array(keys);
        locked = ext_run(&st_lock, args);
        for (r = 0; r < locked; r++)
        {
            bool        isnull;
            int64       o = DatumGetInt64(ext_column(r, 1, &isnull));

            Datum       floor_at;

            keys->k[o - 1].win = DatumGetInt32(ext_column(r, 2, &isnull));
            keys->k[o - 1].last = DatumGetInt64(ext_column(r, 3, &isnull));
            floor_at = ext_column(r, 4, &isnull);
            keys->k[o - 1].at = isnull ? DT_NOBEGIN : DatumGetTimestampTz(floor_at);
        }
        if (locked == (uint64) keys->n)
            return;
        push_read_pids(keys, ext_run(&st_relookup, args));
        if (attempt == PUSH_LOCK_ATTEMPTS)
            ereport(ERROR, (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                            errmsg("push: partitions vanished while being locked")));
    }
}

/* Reads every key's head with a snapshot taken after the locks, which sees every push that
 * held them: the greater of the floor (read with the lock) and the newest segment, and the
 * createdAt of this push's messages, never earlier than the partition's newest. */
static void
push_read_heads(push_keys *keys, Snapshot snapshot, TimestampTz clock)
{
    int64      *pids = palloc(sizeof(int64) * keys->n);
    bool       *found = palloc(sizeof(bool) * keys->n);
    int64      *lasts = palloc(sizeof(int64) * keys->n);
    TimestampTz *ats = palloc(sizeof(TimestampTz) * keys->n);
    int         i;

    for (i = 0; i < keys->n; i++)
        pids[i] = keys->k[i].pid;
    ext_newest_segments(snapshot, pids, keys->n, found, lasts, ats);
    for (i = 0; i < keys->n; i++)
    {
        push_key   *k = &keys->k[i];

        if (found[i])
        {
            k->last = Max(k->last, lasts[i]);
            k->at = Max(k->at, ats[i]);
        }
        k->at = Max(k->at, clock);
    }
}

/* True if items i and j have the same transaction id (bytes, as texteq compares them
 * under a deterministic collation). */
static bool
push_same_txid(const Datum *txids, int i, int j)
{
    text       *a = DatumGetTextPP(txids[i]);
    text       *b = DatumGetTextPP(txids[j]);

    return VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
        memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
}

/* qsort's comparator has no argument: the ids of the items being sorted. */
static const Datum *push_sort_txids;

/* Groups items by transaction id (length, then bytes), each group in position order. */
static int
push_item_cmp(const void *x, const void *y)
{
    int         i = *(const int *) x;
    int         j = *(const int *) y;
    text       *a = DatumGetTextPP(push_sort_txids[i]);
    text       *b = DatumGetTextPP(push_sort_txids[j]);
    int         la = VARSIZE_ANY_EXHDR(a);
    int         lb = VARSIZE_ANY_EXHDR(b);
    int         c = la != lb ? (la > lb) - (la < lb) : memcmp(VARDATA_ANY(a), VARDATA_ANY(b), la);

    return c != 0 ? c : (i > j) - (i < j);
}

/* For every item of key k, first[item] = the first item of k with the same transaction id. */
static void
push_first_occurrences(const push_args *a, const push_key *k, int *first)
{
    int        *order = palloc(sizeof(int) * k->nitems);
    int         g, j;

    memcpy(order, k->items, sizeof(int) * k->nitems);
    push_sort_txids = a->txids;
    qsort(order, k->nitems, sizeof(int), push_item_cmp);
    for (g = 0; g < k->nitems; g = j)
        for (j = g; j < k->nitems && push_same_txid(a->txids, order[g], order[j]); j++)
            first[order[j]] = order[g];
    pfree(order);
}

/* Dedup rows to write. */
typedef struct push_dedup_rows
{
    int64      *pids, *offsets;
    Datum      *txids;
    TimestampTz *ats;
    int         n;
} push_dedup_rows;

/* Room for n dedup rows. */
static void
push_dedup_init(push_dedup_rows *d, int n)
{
    d->pids = palloc(sizeof(int64) * Max(n, 1));
    d->offsets = palloc(sizeof(int64) * Max(n, 1));
    d->txids = palloc(sizeof(Datum) * Max(n, 1));
    d->ats = palloc(sizeof(TimestampTz) * Max(n, 1));
    d->n = 0;
}

/* Appends one dedup row. */
static void
push_dedup_add(push_dedup_rows *d, int64 pid, Datum txid, int64 offset, TimestampTz at)
{
    d->pids[d->n] = pid;
    d->txids[d->n] = txid;
    d->offsets[d->n] = offset;
    d->ats[d->n] = at;
    d->n++;
}

/* Writes the dedup rows with the statement, if there are any; `direct` inserts them without
 * the executor where the table allows it (ext_insert.h). */
static void
push_dedup_write(ext_statement *st, const push_dedup_rows *d, bool direct)
{
    Datum       args[4];

    if (d->n == 0)
        return;
    if (direct)
    {
        Datum      *pids = palloc(sizeof(Datum) * d->n);
        Datum      *offsets = palloc(sizeof(Datum) * d->n);
        Datum      *ats = palloc(sizeof(Datum) * d->n);
        Datum      *columns[4] = {pids, d->txids, offsets, ats};
        int         i;

        for (i = 0; i < d->n; i++)
        {
            pids[i] = Int64GetDatum(d->pids[i]);
            offsets[i] = Int64GetDatum(d->offsets[i]);
            ats[i] = TimestampTzGetDatum(d->ats[i]);
        }
        if (ext_insert_rows("log_dedup", 4, d->n, columns))
            return;
    }
    args[0] = push_int8_array(d->pids, d->n, INT8OID);
    args[1] = PointerGetDatum(construct_array(d->txids, d->n, TEXTOID, -1, false, TYPALIGN_INT));
    args[2] = push_int8_array(d->offsets, d->n, INT8OID);
    args[3] = push_int8_array(d->ats, d->n, TIMESTAMPTZOID);
    ext_run(st, args);
}

/* The rows a push writes, collected key by key. */
typedef struct push_rows
{
    int64      *seg_pids, *seg_firsts, *seg_lasts;
    Datum      *seg_codecs, *seg_bodies;
    TimestampTz *seg_ats;
    int         nsegs;
    push_dedup_rows fresh;      /* ids the probe did not find */
    push_dedup_rows again;      /* ids whose row left the window */
} push_rows;

/* Resolves key k: duplicates (stored within the window, or earlier in this call) keep the
 * original's offset, new items get the next offsets; packs its segment and collects its
 * dedup rows. found/old_offsets/old_ats are the probe's results per item. */
static void
push_resolve_key(const push_args *a, const push_key *k, const bool *found,
                 const int64 *old_offsets, const TimestampTz *old_ats, int *first,
                 qseg_frame *frames, push_answer *ans, push_rows *rows)
{
    TimestampTz window_start = k->at - (TimestampTz) k->win * USECS_PER_SEC;
    qseg_frame *seg_frames = palloc(sizeof(qseg_frame) * k->nitems);
    int64       at_us;
    uint64      raw = 0;
    int         nnew = 0;
    int         j;

    if (!ext_timestamptz_to_unix_us(k->at, &at_us))
        elog(ERROR, "push: createdAt out of range");
    if (k->win > 0)
        push_first_occurrences(a, k, first);
    for (j = 0; j < k->nitems; j++)
    {
        int         i = k->items[j];

        ans->pids[i] = k->pid;
        ans->ats[i] = k->at;
        if (k->win > 0 && found[i] && old_ats[i] > window_start)
        {
            ans->is_new[i] = false;
            ans->offsets[i] = old_offsets[i];
        }
        else if (k->win > 0 && first[i] != i)
        {
            /* The first occurrence has a smaller position: it is resolved already. */
            ans->is_new[i] = false;
            ans->offsets[i] = ans->offsets[first[i]];
        }
        else
        {
            ans->is_new[i] = true;
            ans->offsets[i] = k->last + (++nnew);
            frames[i].created_at_us = at_us;
            seg_frames[nnew - 1] = frames[i];
            raw += qseg_frame_size(&frames[i]);
            if (k->win > 0)
                push_dedup_add(found[i] ? &rows->again : &rows->fresh, k->pid, a->txids[i],
                               ans->offsets[i], k->at);
        }
    }
    if (nnew > 0)
    {
        bytea      *body = ext_pack_frames(seg_frames, (uint32) nnew, raw, PUSH_CODEC, PUSH_LEVEL);
        int         s = rows->nsegs++;

        rows->seg_pids[s] = k->pid;
        rows->seg_firsts[s] = k->last + 1;
        rows->seg_lasts[s] = k->last + nnew;
        rows->seg_codecs[s] = Int16GetDatum(((uint8 *) VARDATA(body))[PUSH_HEADER_CODEC_BYTE]);
        rows->seg_ats[s] = k->at;
        rows->seg_bodies[s] = PointerGetDatum(body);
    }
    pfree(seg_frames);
}

/* Inserts the segments and dedup rows and makes the cursors of the partitions that got
 * messages claimable. */
static void
push_write_rows(const push_rows *rows)
{
    Datum       args[6];
    Datum      *columns[6];
    int         c, i;

    if (rows->nsegs == 0)
        return;
    for (c = 0; c < 6; c++)
        columns[c] = palloc(sizeof(Datum) * rows->nsegs);
    for (i = 0; i < rows->nsegs; i++)
    {
        columns[0][i] = Int64GetDatum(rows->seg_pids[i]);
        columns[1][i] = Int64GetDatum(rows->seg_firsts[i]);
        columns[2][i] = Int64GetDatum(rows->seg_lasts[i]);
        columns[3][i] = rows->seg_codecs[i];
        columns[4][i] = TimestampTzGetDatum(rows->seg_ats[i]);
        columns[5][i] = rows->seg_bodies[i];
    }
    if (!ext_insert_rows("log_segments", 6, rows->nsegs, columns))
    {
        args[0] = push_int8_array(rows->seg_pids, rows->nsegs, INT8OID);
        args[1] = push_int8_array(rows->seg_firsts, rows->nsegs, INT8OID);
        args[2] = push_int8_array(rows->seg_lasts, rows->nsegs, INT8OID);
        args[3] = PointerGetDatum(construct_array(rows->seg_codecs, rows->nsegs, INT2OID, 2,
                                                  true, TYPALIGN_SHORT));
        args[4] = push_int8_array(rows->seg_ats, rows->nsegs, TIMESTAMPTZOID);
        args[5] = PointerGetDatum(construct_array(rows->seg_bodies, rows->nsegs, BYTEAOID, -1,
                                                  false, TYPALIGN_INT));
        ext_run(&st_segments, args);
    }
    push_dedup_write(&st_dedup_new, &rows->fresh, true);
    push_dedup_write(&st_dedup_again, &rows->again, false);
    /* One segment per partition that got messages: its (partition, createdAt) pairs. */
    args[0] = push_int8_array(rows->seg_pids, rows->nsegs, INT8OID);
    args[1] = push_int8_array(rows->seg_ats, rows->nsegs, TIMESTAMPTZOID);
    ext_run(&st_mark_ready, args);
}

void
push_store(const push_args *a, push_keys *keys, qseg_frame *frames, push_answer *ans)
{
    int         n = a->n;
    Datum      *probe_pids = palloc(sizeof(Datum) * n);
    bool       *probe_pid_nulls = palloc(sizeof(bool) * n);
    bool       *found = palloc(sizeof(bool) * n);
    int64      *old_offsets = palloc(sizeof(int64) * n);
    TimestampTz *old_ats = palloc(sizeof(TimestampTz) * n);
    int        *first = palloc(sizeof(int) * n);
    push_rows   rows;
    TimestampTz clock;
    int         i, j;

    push_lock_partitions(keys);
    /* createdAt is no earlier than this clock, read after the locks: newer than any claim
     * floor raised before them (53_claim_floor.sql). */
    clock = GetCurrentTimestamp();

    /* Heads and the dedup probe (one for all keys with a window) read with a snapshot taken
     * after the locks. */
    CommandCounterIncrement();
    PushActiveSnapshot(GetTransactionSnapshot());
    push_read_heads(keys, GetActiveSnapshot(), clock);
    for (i = 0; i < keys->n; i++)
        for (j = 0; j < keys->k[i].nitems; j++)
        {
            int         item = keys->k[i].items[j];

            probe_pids[item] = Int64GetDatum(keys->k[i].pid);
            probe_pid_nulls[item] = keys->k[i].win <= 0;
        }
    ext_dedup_probe_pairs(GetActiveSnapshot(), 0, probe_pids, probe_pid_nulls, a->txids,
                          a->txid_nulls, n, found, old_offsets, old_ats);
    PopActiveSnapshot();

    rows.seg_pids = palloc(sizeof(int64) * keys->n);
    rows.seg_firsts = palloc(sizeof(int64) * keys->n);
    rows.seg_lasts = palloc(sizeof(int64) * keys->n);
    rows.seg_codecs = palloc(sizeof(Datum) * keys->n);
    rows.seg_bodies = palloc(sizeof(Datum) * keys->n);
    rows.seg_ats = palloc(sizeof(TimestampTz) * keys->n);
    rows.nsegs = 0;
    push_dedup_init(&rows.fresh, n);
    push_dedup_init(&rows.again, n);
    for (i = 0; i < keys->n; i++)
    {
        CHECK_FOR_INTERRUPTS();
        push_resolve_key(a, &keys->k[i], found, old_offsets, old_ats, first, frames, ans, &rows);
    }
    push_write_rows(&rows);
}
