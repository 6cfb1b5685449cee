/* queen_ext: queen.log_segments opened and checked, and read forward by key (ext_segments.h). */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/relcache.h"

#include "ext_segments.h"

#define EXT_SEGMENTS_SCHEMA "queen"
#define EXT_SEGMENTS_TABLE "log_segments"

/* Whether column `col` (1-based) of d exists with type `type`. */
static bool
ext_column_is(TupleDesc d, int col, Oid type)
{
    return d->natts >= col && !TupleDescAttr(d, col - 1)->attisdropped &&
        TupleDescAttr(d, col - 1)->atttypid == type;
}

Relation
ext_open_segments(const char *op)
{
    RangeVar   *rv = makeRangeVar(pstrdup(EXT_SEGMENTS_SCHEMA), pstrdup(EXT_SEGMENTS_TABLE), -1);
    Oid         relid = RangeVarGetRelidExtended(rv, AccessShareLock, RVR_MISSING_OK, NULL,
                                                 NULL);
    AclResult   acl;
    Relation    heap;
    TupleDesc   d;

    if (!OidIsValid(relid))
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                        errmsg("%s: relation \"%s.%s\" does not exist: the broker schema is not installed",
                               op, EXT_SEGMENTS_SCHEMA, EXT_SEGMENTS_TABLE)));
    acl = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
    if (acl != ACLCHECK_OK)
        aclcheck_error(acl, OBJECT_TABLE, EXT_SEGMENTS_TABLE);
    heap = table_open(relid, NoLock);
    d = RelationGetDescr(heap);
    if (heap->rd_rel->relkind != RELKIND_RELATION ||
        !ext_column_is(d, EXT_SEG_PARTITION, INT8OID) || !ext_column_is(d, EXT_SEG_FIRST, INT8OID) ||
        !ext_column_is(d, EXT_SEG_LAST, INT8OID) || !ext_column_is(d, EXT_SEG_CODEC, INT2OID) ||
        !ext_column_is(d, EXT_SEG_CREATED, TIMESTAMPTZOID) || !ext_column_is(d, EXT_SEG_BODY, BYTEAOID))
        ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                        errmsg("%s: %s.%s is not the broker's segment table",
                               op, EXT_SEGMENTS_SCHEMA, EXT_SEGMENTS_TABLE)));
    return heap;
}

Relation
ext_open_segments_key(Relation heap, const char *op)
{
    Oid         pk = RelationGetPrimaryKeyIndex(heap);
    Relation    index;

    if (!OidIsValid(pk))
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                        errmsg("%s: %s.%s has no primary key", op, EXT_SEGMENTS_SCHEMA,
                               EXT_SEGMENTS_TABLE)));
    index = index_open(pk, AccessShareLock);
    if (index->rd_rel->relam != BTREE_AM_OID || index->rd_index->indnkeyatts != 2 ||
        index->rd_index->indkey.values[0] != EXT_SEG_PARTITION ||
        index->rd_index->indkey.values[1] != EXT_SEG_LAST ||
        index->rd_opcintype[0] != INT8OID || index->rd_opcintype[1] != INT8OID)
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                        errmsg("%s: the primary key of %s.%s is not (partition_id, last_offset)",
                               op, EXT_SEGMENTS_SCHEMA, EXT_SEGMENTS_TABLE)));
    return index;
}

void
ext_segment_reader_begin(ext_segment_reader *r, Snapshot snapshot, const char *op)
{
    r->heap = ext_open_segments(op);
    r->index = ext_open_segments_key(r->heap, op);
    r->slot = table_slot_create(r->heap, NULL);
    r->scan = index_beginscan(r->heap, r->index, snapshot, 2, 0);
    ScanKeyEntryInitialize(&r->keys[0], 0, 1, BTEqualStrategyNumber, InvalidOid, InvalidOid,
                           F_INT8EQ, (Datum) 0);
    ScanKeyEntryInitialize(&r->keys[1], 0, 2, BTGreaterStrategyNumber, InvalidOid, InvalidOid,
                           F_INT8GT, (Datum) 0);
}

void
ext_segment_reader_seek(ext_segment_reader *r, int64 pid, int64 after)
{
    r->keys[0].sk_argument = Int64GetDatum(pid);
    r->keys[1].sk_argument = Int64GetDatum(after);
    index_rescan(r->scan, r->keys, 2, NULL, 0);
}

bool
ext_segment_reader_next(ext_segment_reader *r, int64 *first, int64 *last, int16 *codec,
                        bytea **body)
{
    bool        isnull;

    CHECK_FOR_INTERRUPTS();
    if (!index_getnext_slot(r->scan, ForwardScanDirection, r->slot))
        return false;
    /* The table's columns are NOT NULL (migration 0003). */
    *first = DatumGetInt64(slot_getattr(r->slot, EXT_SEG_FIRST, &isnull));
    *last = DatumGetInt64(slot_getattr(r->slot, EXT_SEG_LAST, &isnull));
    *codec = DatumGetInt16(slot_getattr(r->slot, EXT_SEG_CODEC, &isnull));
    if (body != NULL)
    {
        struct varlena *v = (struct varlena *) DatumGetPointer(
            slot_getattr(r->slot, EXT_SEG_BODY, &isnull));
        struct varlena *flat = pg_detoast_datum_packed(v);

        /* A body stored inline is in the slot's buffer: copy it before the next row. */
        *body = (bytea *) (flat == v ? pg_detoast_datum_copy(v) : flat);
    }
    ExecClearTuple(r->slot);
    return true;
}

void
ext_segment_reader_end(ext_segment_reader *r)
{
    index_endscan(r->scan);
    ExecDropSingleTupleTableSlot(r->slot);
    index_close(r->index, NoLock);
    table_close(r->heap, NoLock);
}
