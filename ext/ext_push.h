/* queen_ext: the parts of the fused push in C (ext/push.c, ext/push_keys.c, ext/push_store.c). */
#ifndef QUEEN_EXT_PUSH_H
#define QUEEN_EXT_PUSH_H

/* Include after postgres.h. */
#include "datatype/timestamp.h"
#include "utils/array.h"

#include "queen_segment.h"

/* The call's arguments, deconstructed (queen.push's seven arrays). Trace ids and producers
 * may be NULL arrays, which read as all-NULL elements. */
typedef struct push_args
{
    ArrayType  *a_queues, *a_parts, *a_counts, *a_txids, *a_traces, *a_producers, *a_payloads;
    Datum      *queues, *parts, *counts, *txids, *traces, *producers, *payloads;
    bool       *queue_nulls, *part_nulls, *count_nulls, *txid_nulls, *trace_nulls,
               *producer_nulls, *payload_nulls;
    int         nqueues, nparts, ncounts;   /* elements of the key arrays */
    int         n;                          /* items */
} push_args;

/* One distinct (queue, partition) of the call, with its items (0-based positions in the
 * item arrays, ascending) and, once locked, its partition, dedup window and head. */
typedef struct push_key
{
    Datum       queue, part;    /* text */
    int        *items;
    int         nitems;
    int64       pid;            /* 0 until found or created */
    int32       win;            /* dedupWindowSeconds */
    int64       last;           /* the newest offset before this push */
    TimestampTz at;             /* createdAt of this push's messages in the partition */
} push_key;

/* The keys with items, in lock order: (queue, partition) by bytes. */
typedef struct push_keys
{
    push_key   *k;
    int         n;
} push_keys;

/* The answer, one element per item. */
typedef struct push_answer
{
    bool       *is_new;
    int64      *pids;
    int64      *offsets;
    TimestampTz *ats;
} push_answer;

/* Validates the key arrays as queen.push_key_ranges does (22023: lengths, NULL names, NULL
 * or negative counts, counts not adding up to the items) and groups the items by key, in
 * lock order. */
extern void push_key_ranges(const push_args *a, push_keys *out);

/* With the caller connected to SPI: finds or creates the keys' partitions, takes the locks,
 * allocates offsets with dedup, writes the segments (frames[i] is item i's frame, its
 * created_at still to be set), the dedup rows and the cursors' readiness, and fills ans. */
extern void push_store(const push_args *a, push_keys *keys, qseg_frame *frames,
                       push_answer *ans);

#endif
