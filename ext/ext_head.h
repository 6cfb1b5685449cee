/* queen_ext: the newest segment of partitions (ext/partition_head.c), for offset allocation. */
#ifndef QUEEN_EXT_HEAD_H
#define QUEEN_EXT_HEAD_H

/* Include after postgres.h. */
#include "datatype/timestamp.h"
#include "utils/snapshot.h"

/* For each of n partitions, whether `snapshot` sees a segment of it, and then the newest
 * one's last_offset and created_at. Opens queen.log_segments and its primary key with
 * AccessShareLock (kept to the end of the transaction) after checking them (42P01, 42501,
 * 42809, 42704). */
extern void ext_newest_segments(Snapshot snapshot, const int64 *pids, int n, bool *found,
                                int64 *last_offsets, TimestampTz *created_ats);

#endif
