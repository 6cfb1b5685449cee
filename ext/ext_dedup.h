/* queen_ext: direct probes of the dedup index queen.log_dedup (ext/dedup_probe.c). */
#ifndef QUEEN_EXT_DEDUP_H
#define QUEEN_EXT_DEDUP_H

/* Include after postgres.h. */
#include "datatype/timestamp.h"
#include "utils/snapshot.h"

/* Probes n (partition, transaction id) pairs in queen.log_dedup with `snapshot`: found[i]
 * tells whether pair i has a visible row, and then offsets[i] and created_ats[i] hold its
 * msg_offset and created_at. The partition is pids[i], or partition_id when pids is NULL; a
 * NULL partition or id matches nothing. Opens the table with AccessShareLock (kept to the
 * end of the transaction) after checking it (42P01, 42501, 42809, 42704). */
extern void ext_dedup_probe_pairs(Snapshot snapshot, int64 partition_id, const Datum *pids,
                                  const bool *pid_nulls, const Datum *txids,
                                  const bool *txid_nulls, int n, bool *found, int64 *offsets,
                                  TimestampTz *created_ats);

#endif
