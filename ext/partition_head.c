/* queen_ext: partitions' newest segments read by direct backward probes of the
 * queen.log_segments primary key (partition_id, last_offset). */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "ext_head.h"
#include "ext_segments.h"

void
ext_newest_segments(Snapshot snapshot, const int64 *pids, int n, bool *found,
                    int64 *last_offsets, TimestampTz *created_ats)
{
    Relation    heap = ext_open_segments("push");
    Relation    index = ext_open_segments_key(heap, "push");
    TupleTableSlot *slot = table_slot_create(heap, NULL);
    IndexScanDesc scan = index_beginscan(heap, index, snapshot, 1, 0);
    ScanKeyData key;
    int         i;

    ScanKeyEntryInitialize(&key, 0, 1, BTEqualStrategyNumber, InvalidOid, InvalidOid,
                           F_INT8EQ, (Datum) 0);
    for (i = 0; i < n; i++)
    {
        bool        null_last, null_created;

        CHECK_FOR_INTERRUPTS();
        key.sk_argument = Int64GetDatum(pids[i]);
        index_rescan(scan, &key, 1, NULL, 0);
        found[i] = false;
        /* Backwards on (partition_id, last_offset): the first visible row is the newest. */
        if (!index_getnext_slot(scan, BackwardScanDirection, slot))
            continue;
        last_offsets[i] = DatumGetInt64(slot_getattr(slot, EXT_SEG_LAST, &null_last));
        created_ats[i] = DatumGetTimestampTz(slot_getattr(slot, EXT_SEG_CREATED, &null_created));
        found[i] = !null_last && !null_created;
        ExecClearTuple(slot);
    }
    index_endscan(scan);
    ExecDropSingleTupleTableSlot(slot);
    index_close(index, NoLock);
    table_close(heap, NoLock);
}
