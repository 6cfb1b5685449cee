/* queen_ext: the ack of a call of completions (ext/ack_completed.c), for the SQL function and
 * for the fused ack, which applies its completions without a round trip through SQL. */
#ifndef QUEEN_EXT_ACK_H
#define QUEEN_EXT_ACK_H

/* Include after postgres.h. */
#include "funcapi.h"
#include "utils/array.h"

/* Cursors of a group locked by ext_ack_lock_free_cursors, as read under the lock. */
typedef struct ext_ack_cursors ext_ack_cursors;

/* Locks the group's cursors on pids that are free to lock now (SKIP LOCKED), in partition
 * order, newest version first, and reads them; the others are skipped. Needs an SPI
 * connection; the result lives in the current memory context. */
extern ext_ack_cursors *ext_ack_lock_free_cursors(Datum group, ArrayType *pids);

/* How many cursors were locked, and the partition of the i-th (ascending). */
extern int  ext_ack_locked_count(const ext_ack_cursors *locked);
extern int64 ext_ack_locked_partition(const ext_ack_cursors *locked, int i);

/* Applies completions exactly as queen.ack_completed (the group's cursors on pids locked in
 * partition order, each moved to the highest acked offset of its live span) and appends its
 * rows to rsinfo's tuplestore, in its order. With locked, the cursors are those already locked
 * and read by ext_ack_lock_free_cursors (only the ones on pids are written; a partition not
 * among them has no cursor for these acks); without, they are locked and read here. Row i's
 * item is item_numbers[i] (NULL: i + 1). The four arrays must not be NULL; raises 22023 when
 * they differ in length. Connects to SPI itself (nested in the caller's connection, if any). */
extern void ext_ack_completed_apply(Datum group, ArrayType *pids, ArrayType *txids,
                                    ArrayType *offsets, ArrayType *leases,
                                    const ext_ack_cursors *locked, const int *item_numbers,
                                    ReturnSetInfo *rsinfo);

#endif
