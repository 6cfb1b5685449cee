/* queen_ext: the ack of a call of completions (ext/ack_completed.c), for the SQL function and
 * for the fused ack, which applies its completions without a round trip through SQL. */
#ifndef QUEEN_EXT_ACK_H
#define QUEEN_EXT_ACK_H

/* Include after postgres.h. */
#include "funcapi.h"
#include "utils/array.h"

/* Applies completions exactly as queen.ack_completed (the group's cursors on pids locked in
 * partition order, each moved to the highest acked offset of its live span) and appends its
 * rows to rsinfo's tuplestore, in its order. Row i's item is item_numbers[i] (NULL: i + 1).
 * The four arrays must not be NULL; raises 22023 when they differ in length. Connects to SPI
 * itself (nested in the caller's connection, if any). */
extern void ext_ack_completed_apply(Datum group, ArrayType *pids, ArrayType *txids,
                                    ArrayType *offsets, ArrayType *leases,
                                    const int *item_numbers, ReturnSetInfo *rsinfo);

#endif
