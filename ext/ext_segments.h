/* queen_ext: direct reads of queen.log_segments through its primary key (partition_id,
 * last_offset). The table has no triggers and no row-level security, so reading it directly
 * sees what a SELECT under the same snapshot sees. */
#ifndef QUEEN_EXT_SEGMENTS_H
#define QUEEN_EXT_SEGMENTS_H

/* Include after postgres.h. */
#include "access/genam.h"
#include "access/skey.h"
#include "executor/tuptable.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

/* queen.log_segments' columns, 1-based. */
#define EXT_SEG_PARTITION 1
#define EXT_SEG_FIRST 2
#define EXT_SEG_LAST 3
#define EXT_SEG_CODEC 4
#define EXT_SEG_CREATED 5
#define EXT_SEG_BODY 6

/* Opens queen.log_segments (AccessShareLock, kept to the end of the transaction) after
 * checking that the user may read it and that its columns are the broker's; raises 42P01,
 * 42501 or 42809, naming `op` (the operation: "push", "pop"). */
extern Relation ext_open_segments(const char *op);

/* Opens (AccessShareLock) the primary key of queen.log_segments, which must be a B-tree on
 * (partition_id, last_offset); raises 42704 otherwise, naming `op`. */
extern Relation ext_open_segments_key(Relation heap, const char *op);

/* A forward reader of one partition's segments at a time, in last_offset order. */
typedef struct ext_segment_reader
{
    Relation    heap;
    Relation    index;
    TupleTableSlot *slot;
    IndexScanDesc scan;
    ScanKeyData keys[2];
} ext_segment_reader;

/* Opens the table and its key for reads under `snapshot` (see ext_open_segments). */
extern void ext_segment_reader_begin(ext_segment_reader *r, Snapshot snapshot, const char *op);

/* Positions the reader before the first segment of partition pid whose last_offset is
 * greater than `after`. */
extern void ext_segment_reader_seek(ext_segment_reader *r, int64 pid, int64 after);

/* The next segment of the partition sought, or false past its last. The body is a detoasted
 * copy in the current memory context; pass body = NULL to skip it. */
extern bool ext_segment_reader_next(ext_segment_reader *r, int64 *first, int64 *last,
                                    int16 *codec, bytea **body);

/* Closes the scan; the table locks stay to the end of the transaction. */
extern void ext_segment_reader_end(ext_segment_reader *r);

#endif
