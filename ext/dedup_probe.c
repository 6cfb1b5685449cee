/* queen_ext.dedup_probe: for a batch of transaction ids, the queen.log_dedup rows of one
 * partition, found by direct B-tree probes of its (partition_id, transaction_id) key. */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/lockdefs.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "ext_dedup.h"

#define EXT_DEDUP_SCHEMA "queen"
#define EXT_DEDUP_TABLE "log_dedup"
#define EXT_ATT_PARTITION 1
#define EXT_ATT_TXID 2
#define EXT_ATT_OFFSET 3
#define EXT_ATT_CREATED 4

/* True if column attno of rel exists, is not dropped and has type typid. */
static bool
ext_column_is(Relation rel, AttrNumber attno, Oid typid)
{
    Form_pg_attribute att;

    if (attno > RelationGetDescr(rel)->natts)
        return false;
    att = TupleDescAttr(RelationGetDescr(rel), attno - 1);
    return !att->attisdropped && att->atttypid == typid;
}

/* True if key column k of a B-tree index compares with the operator whose function is
 * eqfunc on type typid. */
static bool
ext_key_uses(Relation index, int k, Oid typid, Oid eqfunc)
{
    Oid         opno = get_opfamily_member(index->rd_opfamily[k], typid, typid,
                                           BTEqualStrategyNumber);

    return index->rd_opcintype[k] == typid && OidIsValid(opno) && get_opcode(opno) == eqfunc;
}

/* True if index is a valid, plain B-tree on exactly (partition_id, transaction_id) with
 * int8/text equality and the column's collation. */
static bool
ext_is_key_index(Relation heap, Relation index)
{
    Form_pg_index ind = index->rd_index;
    Oid         collation = TupleDescAttr(RelationGetDescr(heap), EXT_ATT_TXID - 1)->attcollation;

    return index->rd_rel->relam == BTREE_AM_OID && ind->indisvalid &&
        ind->indnkeyatts == 2 && ind->indkey.values[0] == EXT_ATT_PARTITION &&
        ind->indkey.values[1] == EXT_ATT_TXID &&
        heap_attisnull(index->rd_indextuple, Anum_pg_index_indexprs, NULL) &&
        heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL) &&
        index->rd_indcollation[1] == collation &&
        ext_key_uses(index, 0, INT8OID, F_INT8EQ) &&
        ext_key_uses(index, 1, TEXTOID, F_TEXTEQ);
}

/* Opens (AccessShareLock) the index on (partition_id, transaction_id) of heap, the primary
 * key first; raises 42704 if there is none. */
static Relation
ext_open_key_index(Relation heap)
{
    List       *indexes = RelationGetIndexList(heap);
    Oid         pk = heap->rd_pkindex;
    ListCell   *lc;

    if (OidIsValid(pk))
        indexes = lcons_oid(pk, indexes);
    foreach(lc, indexes)
    {
        Relation    index = index_open(lfirst_oid(lc), AccessShareLock);

        if (ext_is_key_index(heap, index))
        {
            list_free(indexes);
            return index;
        }
        index_close(index, AccessShareLock);
    }
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                    errmsg("dedup_probe: %s.%s has no B-tree index on (partition_id, transaction_id)",
                           EXT_DEDUP_SCHEMA, EXT_DEDUP_TABLE)));
    pg_unreachable();
}

/* Opens queen.log_dedup (AccessShareLock, kept to the end of the transaction) after
 * checking that it exists (42P01), that the user may read it (42501) and its columns. */
static Relation
ext_open_dedup_table(void)
{
    RangeVar   *rv = makeRangeVar(pstrdup(EXT_DEDUP_SCHEMA), pstrdup(EXT_DEDUP_TABLE), -1);
    Oid         relid = RangeVarGetRelidExtended(rv, AccessShareLock, RVR_MISSING_OK, NULL,
                                                 NULL);
    AclResult   acl;
    Relation    heap;

    if (!OidIsValid(relid))
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                        errmsg("dedup_probe: relation \"%s.%s\" does not exist: the broker schema is not installed",
                               EXT_DEDUP_SCHEMA, EXT_DEDUP_TABLE)));
    acl = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
    if (acl != ACLCHECK_OK)
        aclcheck_error(acl, OBJECT_TABLE, EXT_DEDUP_TABLE);
    heap = table_open(relid, NoLock);
    if (heap->rd_rel->relkind != RELKIND_RELATION ||
        !ext_column_is(heap, EXT_ATT_PARTITION, INT8OID) ||
        !ext_column_is(heap, EXT_ATT_TXID, TEXTOID) ||
        !ext_column_is(heap, EXT_ATT_OFFSET, INT8OID) ||
        !ext_column_is(heap, EXT_ATT_CREATED, TIMESTAMPTZOID))
        ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                        errmsg("dedup_probe: %s.%s is not a table of (partition_id bigint, transaction_id text, msg_offset bigint, created_at timestamptz)",
                               EXT_DEDUP_SCHEMA, EXT_DEDUP_TABLE)));
    return heap;
}

/* Probes n (partition, transaction id) pairs: for every 0-based position i whose id has a
 * row visible to `snapshot` for its partition (partition_id, or pids[i] when pids is given;
 * a NULL there, like a NULL id, matches nothing), found[i] is set and offsets[i] and
 * created_ats[i] get the row's msg_offset and created_at; found[i] is cleared otherwise. */
void
ext_dedup_probe_pairs(Snapshot snapshot, int64 partition_id, const Datum *pids,
                      const bool *pid_nulls, const Datum *txids, const bool *txid_nulls, int n,
                      bool *found, int64 *offsets, TimestampTz *created_ats)
{
    Relation    heap, index;
    IndexScanDesc scan;
    TupleTableSlot *slot;
    ScanKeyData keys[2];
    int         i;

    heap = ext_open_dedup_table();
    index = ext_open_key_index(heap);
    slot = table_slot_create(heap, NULL);
    scan = index_beginscan(heap, index, snapshot, 2, 0);
    ScanKeyEntryInitialize(&keys[0], 0, EXT_ATT_PARTITION, BTEqualStrategyNumber, InvalidOid,
                           InvalidOid, F_INT8EQ, Int64GetDatum(partition_id));
    ScanKeyEntryInitialize(&keys[1], 0, EXT_ATT_TXID, BTEqualStrategyNumber, InvalidOid,
                           index->rd_indcollation[1], F_TEXTEQ, (Datum) 0);

    for (i = 0; i < n; i++)
    {
        bool        isnull;

        found[i] = false;
        if (txid_nulls[i] || (pids != NULL && pid_nulls[i]))
            continue;
        CHECK_FOR_INTERRUPTS();
        if (pids != NULL)
            keys[0].sk_argument = pids[i];
        keys[1].sk_argument = txids[i];
        index_rescan(scan, keys, 2, NULL, 0);
        /* The key is unique: at most one row is visible to the snapshot. */
        if (!index_getnext_slot(scan, ForwardScanDirection, slot))
            continue;
        /* Both columns are NOT NULL in the broker's schema. */
        offsets[i] = DatumGetInt64(slot_getattr(slot, EXT_ATT_OFFSET, &isnull));
        if (isnull)
            continue;
        created_ats[i] = DatumGetTimestampTz(slot_getattr(slot, EXT_ATT_CREATED, &isnull));
        found[i] = !isnull;
        ExecClearTuple(slot);
    }

    index_endscan(scan);
    ExecDropSingleTupleTableSlot(slot);
    index_close(index, NoLock);
    table_close(heap, NoLock);
}

/* Appends (idx, msg_offset, created_at) to the result for every 1-based position of txids
 * found by ext_dedup_probe_pairs with the active snapshot. */
static void
ext_probe(ReturnSetInfo *rsinfo, int64 partition_id, const Datum *pids, const bool *pid_nulls,
          const Datum *txids, const bool *txid_nulls, int n)
{
    bool       *found = palloc(sizeof(bool) * Max(n, 1));
    int64      *offsets = palloc(sizeof(int64) * Max(n, 1));
    TimestampTz *created_ats = palloc(sizeof(TimestampTz) * Max(n, 1));
    int         i;

    if (!ActiveSnapshotSet())
        ereport(ERROR, (errcode(ERRCODE_INVALID_TRANSACTION_STATE),
                        errmsg("dedup_probe: no active snapshot")));
    ext_dedup_probe_pairs(GetActiveSnapshot(), partition_id, pids, pid_nulls, txids,
                          txid_nulls, n, found, offsets, created_ats);
    for (i = 0; i < n; i++)
    {
        Datum       values[3];
        bool        nulls[3] = {false};

        if (!found[i])
            continue;
        values[0] = Int32GetDatum(i + 1);
        values[1] = Int64GetDatum(offsets[i]);
        values[2] = TimestampTzGetDatum(created_ats[i]);
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
}

/* The elements of a one-dimensional array argument (22023 for more dimensions). */
static void
ext_array_elements(ArrayType *a, Oid elemtype, int elemlen, bool byval, char align,
                   const char *what, Datum **elems, bool **nulls, int *n)
{
    if (ARR_NDIM(a) > 1)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("dedup_probe: %s must be a one-dimensional array", what)));
    deconstruct_array(a, elemtype, elemlen, byval, align, elems, nulls, n);
}

PG_FUNCTION_INFO_V1(queen_ext_dedup_probe);

/* Returns (idx, msg_offset, created_at) for every 1-based position of txids whose id has a
 * row for partition_id visible to the active snapshot; NULL elements give no row. */
Datum
queen_ext_dedup_probe(PG_FUNCTION_ARGS)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    int64       partition_id = PG_GETARG_INT64(0);
    Datum      *txids;
    bool       *txid_nulls;
    int         n;

    InitMaterializedSRF(fcinfo, 0);
    ext_array_elements(PG_GETARG_ARRAYTYPE_P(1), TEXTOID, -1, false, TYPALIGN_INT, "txids",
                       &txids, &txid_nulls, &n);
    ext_probe(rsinfo, partition_id, NULL, NULL, txids, txid_nulls, n);
    return (Datum) 0;
}

PG_FUNCTION_INFO_V1(queen_ext_dedup_probe_keys);

/* Like queen_ext_dedup_probe, with the partition of each id given element by element
 * (partition_ids[i] pairs with txids[i]; 22023 when the lengths differ). */
Datum
queen_ext_dedup_probe_keys(PG_FUNCTION_ARGS)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    Datum      *pids, *txids;
    bool       *pid_nulls, *txid_nulls;
    int         npids, n;

    InitMaterializedSRF(fcinfo, 0);
    ext_array_elements(PG_GETARG_ARRAYTYPE_P(0), INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
                       "partition_ids", &pids, &pid_nulls, &npids);
    ext_array_elements(PG_GETARG_ARRAYTYPE_P(1), TEXTOID, -1, false, TYPALIGN_INT, "txids",
                       &txids, &txid_nulls, &n);
    if (npids != n)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("dedup_probe: partition_ids has %d elements but txids has %d", npids, n)));
    ext_probe(rsinfo, 0, pids, pid_nulls, txids, txid_nulls, n);
    return (Datum) 0;
}
