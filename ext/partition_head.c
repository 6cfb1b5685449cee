/* queen_ext: partitions' newest segments read by direct backward probes of the
 * queen.log_segments primary key (partition_id, last_offset). */
#include "postgres.h"

#include "access/genam.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "ext_head.h"

#define EXT_SEGMENTS_SCHEMA "queen"
#define EXT_SEGMENTS_TABLE "log_segments"
#define EXT_SEG_PARTITION 1
#define EXT_SEG_LAST 3
#define EXT_SEG_CREATED 5

/* Opens queen.log_segments (AccessShareLock) after checking that the user may read it and
 * that its columns are the broker's; raises 42P01, 42501 or 42809. */
static Relation
ext_open_segments(void)
{
    RangeVar   *rv = makeRangeVar(pstrdup(EXT_SEGMENTS_SCHEMA), pstrdup(EXT_SEGMENTS_TABLE), -1);
    Oid         relid = RangeVarGetRelidExtended(rv, AccessShareLock, RVR_MISSING_OK, NULL,
                                                 NULL);
    AclResult   acl;
    Relation    heap;
    TupleDesc   d;

    if (!OidIsValid(relid))
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                        errmsg("push: relation \"%s.%s\" does not exist: the broker schema is not installed",
                               EXT_SEGMENTS_SCHEMA, EXT_SEGMENTS_TABLE)));
    acl = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
    if (acl != ACLCHECK_OK)
        aclcheck_error(acl, OBJECT_TABLE, EXT_SEGMENTS_TABLE);
    heap = table_open(relid, NoLock);
    d = RelationGetDescr(heap);
    if (heap->rd_rel->relkind != RELKIND_RELATION || d->natts < EXT_SEG_CREATED ||
        TupleDescAttr(d, EXT_SEG_PARTITION - 1)->atttypid != INT8OID ||
        TupleDescAttr(d, EXT_SEG_LAST - 1)->atttypid != INT8OID ||
        TupleDescAttr(d, EXT_SEG_CREATED - 1)->atttypid != TIMESTAMPTZOID ||
        TupleDescAttr(d, EXT_SEG_PARTITION - 1)->attisdropped ||
        TupleDescAttr(d, EXT_SEG_LAST - 1)->attisdropped ||
        TupleDescAttr(d, EXT_SEG_CREATED - 1)->attisdropped)
        ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                        errmsg("push: %s.%s is not the broker's segment table",
                               EXT_SEGMENTS_SCHEMA, EXT_SEGMENTS_TABLE)));
    return heap;
}

/* Opens (AccessShareLock) the primary key of queen.log_segments, which must be a B-tree on
 * (partition_id, last_offset); raises 42704 otherwise. */
static Relation
ext_open_segments_key(Relation heap)
{
    Oid         pk = RelationGetPrimaryKeyIndex(heap);
    Relation    index;

    if (!OidIsValid(pk))
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                        errmsg("push: %s.%s has no primary key", EXT_SEGMENTS_SCHEMA,
                               EXT_SEGMENTS_TABLE)));
    index = index_open(pk, AccessShareLock);
    if (index->rd_rel->relam != BTREE_AM_OID || index->rd_index->indnkeyatts != 2 ||
        index->rd_index->indkey.values[0] != EXT_SEG_PARTITION ||
        index->rd_index->indkey.values[1] != EXT_SEG_LAST ||
        index->rd_opcintype[0] != INT8OID)
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                        errmsg("push: the primary key of %s.%s is not (partition_id, last_offset)",
                               EXT_SEGMENTS_SCHEMA, EXT_SEGMENTS_TABLE)));
    return index;
}

void
ext_newest_segments(Snapshot snapshot, const int64 *pids, int n, bool *found,
                    int64 *last_offsets, TimestampTz *created_ats)
{
    Relation    heap = ext_open_segments();
    Relation    index = ext_open_segments_key(heap);
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
