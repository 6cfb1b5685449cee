/* queen_ext: the keys of a fused push in lock order (queen.push_key_ranges in C). */
#include "postgres.h"

#include "utils/builtins.h"

#include "ext_push.h"

#define push_bad_argument(...) \
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg(__VA_ARGS__)))

/* A key's range of items before grouping. */
typedef struct push_range
{
    Datum       queue, part;
    int         lo, cnt;        /* 0-based first item and number of items */
} push_range;

/* Byte order of two text values, as COLLATE "C" compares them. */
static int
push_text_cmp(Datum x, Datum y)
{
    text       *a = DatumGetTextPP(x);
    text       *b = DatumGetTextPP(y);
    int         la = VARSIZE_ANY_EXHDR(a);
    int         lb = VARSIZE_ANY_EXHDR(b);
    int         c = memcmp(VARDATA_ANY(a), VARDATA_ANY(b), Min(la, lb));

    return c != 0 ? c : (la > lb) - (la < lb);
}

/* Lock order of ranges: queue, partition, then item order. */
static int
push_range_cmp(const void *x, const void *y)
{
    const push_range *a = x;
    const push_range *b = y;
    int         c = push_text_cmp(a->queue, b->queue);

    if (c == 0)
        c = push_text_cmp(a->part, b->part);
    return c != 0 ? c : (a->lo > b->lo) - (a->lo < b->lo);
}

void
push_key_ranges(const push_args *a, push_keys *out)
{
    push_range *ranges = palloc(sizeof(push_range) * Max(a->nqueues, 1));
    int64       sum = 0;
    int         nranges = 0;
    int         i, r;

    if (a->nqueues != a->nparts || a->nqueues != a->ncounts)
        push_bad_argument("push: key arrays differ in length");
    for (i = 0; i < a->nqueues; i++)
        if (a->queue_nulls[i] || a->part_nulls[i] || a->count_nulls[i] ||
            DatumGetInt32(a->counts[i]) < 0)
            push_bad_argument("push: queue and partition names must not be NULL, counts not NULL or negative");
    for (i = 0; i < a->nqueues; i++)
    {
        int         cnt = DatumGetInt32(a->counts[i]);

        if (cnt > 0)
        {
            ranges[nranges].queue = a->queues[i];
            ranges[nranges].part = a->parts[i];
            ranges[nranges].lo = (int) sum;
            ranges[nranges].cnt = cnt;
            nranges++;
        }
        sum += cnt;
    }
    if (sum != a->n)
        push_bad_argument("push: item arrays do not match the key counts");

    qsort(ranges, nranges, sizeof(push_range), push_range_cmp);
    out->k = palloc0(sizeof(push_key) * Max(nranges, 1));
    out->n = 0;
    for (r = 0; r < nranges; r++)
    {
        push_key   *k;

        if (out->n == 0 || push_text_cmp(out->k[out->n - 1].queue, ranges[r].queue) != 0 ||
            push_text_cmp(out->k[out->n - 1].part, ranges[r].part) != 0)
        {
            k = &out->k[out->n++];
            k->queue = ranges[r].queue;
            k->part = ranges[r].part;
            k->items = NULL;
            k->nitems = 0;
        }
        k = &out->k[out->n - 1];
        k->items = k->items == NULL
            ? palloc(sizeof(int) * ranges[r].cnt)
            : repalloc(k->items, sizeof(int) * (k->nitems + ranges[r].cnt));
        for (i = 0; i < ranges[r].cnt; i++)
            k->items[k->nitems++] = ranges[r].lo + i;
    }
}
