/* queen_ext: rows inserted into a broker table as COPY inserts them (see ext_insert.h). */
#include "postgres.h"

#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/parsenodes.h"
#include "utils/acl.h"
#include "utils/rel.h"

#include "ext_insert.h"

#define EXT_INSERT_SCHEMA "queen"

/* True if rows can go into rel without SQL: a plain table of ncols live columns without
 * triggers, rules, row-level security or generated columns. */
static bool
ext_insertable_directly(Relation rel, int ncols)
{
    TupleDesc   desc = RelationGetDescr(rel);
    int         i;

    if (rel->rd_rel->relkind != RELKIND_RELATION || rel->trigdesc != NULL ||
        rel->rd_rules != NULL || rel->rd_rel->relrowsecurity || desc->natts != ncols ||
        (desc->constr != NULL && desc->constr->has_generated_stored))
        return false;
    for (i = 0; i < ncols; i++)
        if (TupleDescAttr(desc, i)->attisdropped)
            return false;
    return true;
}

bool
ext_insert_rows(const char *table, int ncols, int nrows, Datum *const *columns)
{
    RangeVar   *rv = makeRangeVar(pstrdup(EXT_INSERT_SCHEMA), pstrdup(table), -1);
    Oid         relid = RangeVarGetRelid(rv, RowExclusiveLock, false);
    AclResult   acl = pg_class_aclcheck(relid, GetUserId(), ACL_INSERT);
    Relation    rel;
    RangeTblEntry *rte;
    EState     *estate;
    ResultRelInfo *rri;
    TupleTableSlot **slots;
    int         r, c;

    if (acl != ACLCHECK_OK)
        aclcheck_error(acl, OBJECT_TABLE, table);
    rel = table_open(relid, NoLock);
    if (!ext_insertable_directly(rel, ncols))
    {
        table_close(rel, NoLock);
        return false;
    }

    /* An executor state for the constraint checks and index inserts, as logical replication
     * builds one to apply rows. */
    estate = CreateExecutorState();
    rte = makeNode(RangeTblEntry);
    rte->rtekind = RTE_RELATION;
    rte->relid = relid;
    rte->relkind = RELKIND_RELATION;
    rte->rellockmode = RowExclusiveLock;
    ExecInitRangeTable(estate, list_make1(rte));
    rri = makeNode(ResultRelInfo);
    InitResultRelInfo(rri, rel, 1, NULL, 0);
    estate->es_output_cid = GetCurrentCommandId(true);
    ExecOpenIndices(rri, false);

    slots = palloc(sizeof(TupleTableSlot *) * Max(nrows, 1));
    for (r = 0; r < nrows; r++)
    {
        slots[r] = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsVirtual);
        ExecClearTuple(slots[r]);
        for (c = 0; c < ncols; c++)
        {
            slots[r]->tts_values[c] = columns[c][r];
            slots[r]->tts_isnull[c] = false;
        }
        ExecStoreVirtualTuple(slots[r]);
        if (rel->rd_att->constr != NULL)
            ExecConstraints(rri, slots[r], estate);
    }
    table_multi_insert(rel, slots, nrows, estate->es_output_cid, 0, NULL);
    for (r = 0; r < nrows; r++)
    {
        if (rri->ri_NumIndices > 0)
            list_free(ExecInsertIndexTuples(rri, slots[r], estate, false, false, NULL, NIL));
        ExecDropSingleTupleTableSlot(slots[r]);
    }
    table_finish_bulk_insert(rel, 0);
    ExecCloseIndices(rri);
    FreeExecutorState(estate);
    table_close(rel, NoLock);
    return true;
}
