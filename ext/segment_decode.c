/* queen_ext.segment_decode: the frames of a raw or zstd segment as rows, with the shared
 * codec; the whole segment is checked whatever offset range is asked for. */
#include "postgres.h"

#include "common/int.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/uuid.h"

#include "queen_segment.h"
#include "queen_segment_zstd.h"

#include "ext_convert.h"
#include "ext_errors.h"
#include "ext_zstd.h"

#define EXT_DECODE_COLUMNS 7

/* The frame area of a checked segment: the body of a raw one, or a zstd body decompressed
 * into palloc'd memory after qseg_zstd_check has vouched for raw_length. */
static const uint8 *
ext_frame_area(const qseg_header *h)
{
    uint8      *area;
    qseg_status st;

    if (h->codec == QSEG_CODEC_RAW)
        return h->body;
    st = qseg_zstd_check(h);
    if (st != QSEG_OK)
        ext_raise_zstd_error(st, h, false);
    if (h->raw_length > MaxAllocSize)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("segment_decode: raw_length %u of a zstd segment exceeds the 1 GB limit",
                               h->raw_length)));
    area = (uint8 *) palloc(h->raw_length);
    st = qseg_zstd_decompress(ext_zstd_dctx(), h, area, h->raw_length);
    if (st != QSEG_OK)
        ext_raise_zstd_error(st, h, true);
    return area;
}

/* Walks every frame of the area; raises XX001 at the first corrupt one or for bytes left
 * over, so a range query never hides a corrupt segment. */
static void
ext_check_frames(const uint8 *area, const qseg_header *h)
{
    qseg_iter   it;
    qseg_status st;
    uint32      i;

    qseg_iter_init(&it, area, h->raw_length, h->frame_count);
    for (i = 0;; i++)
    {
        st = qseg_iter_next(&it, NULL);
        if (st == QSEG_END)
            return;
        if (st != QSEG_OK)
            ext_raise_frame_error(st, &it, i, h->frame_count, area);
        if ((i & 0xfff) == 0)
            CHECK_FOR_INTERRUPTS();
    }
}

/* Appends one row for frame f (index idx, offset off) to the result. */
static void
ext_put_frame(ReturnSetInfo *rsinfo, const qseg_frame *f, uint32 idx, int64 off)
{
    Datum       values[EXT_DECODE_COLUMNS];
    bool        nulls[EXT_DECODE_COLUMNS] = {false};

    /* Text first, then created_at: the order in which queen.segment_frames raises. */
    values[0] = Int32GetDatum((int32) idx);
    values[1] = Int64GetDatum(off);
    values[3] = PointerGetDatum(ext_utf8_to_text(f->txid, f->txid_len));
    if (f->trace_id != NULL)
    {
        pg_uuid_t  *u = (pg_uuid_t *) palloc(sizeof(pg_uuid_t));

        memcpy(u->data, f->trace_id, UUID_LEN);
        values[4] = UUIDPGetDatum(u);
    }
    else
        nulls[4] = true;
    if (f->producer != NULL)
        values[5] = PointerGetDatum(ext_utf8_to_text(f->producer, f->producer_len));
    else
        nulls[5] = true;
    values[6] = PointerGetDatum(ext_utf8_to_text(f->payload, f->payload_len));
    values[2] = TimestampTzGetDatum(ext_timestamptz_from_unix_us(f->created_at_us));
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

PG_FUNCTION_INFO_V1(queen_ext_segment_decode);

/* Returns one row per frame whose offset (base_offset + idx) is in [from, to], after
 * checking the whole segment: XX001 if corrupt, 22021 for invalid UTF-8 and 22008 for an
 * out-of-range created_at in a returned frame; no rows for a NULL body. */
Datum
queen_ext_segment_decode(PG_FUNCTION_ARGS)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    bytea      *body;
    int64       base, from = 0, to = 0;
    bool        has_from, has_to;
    qseg_header h;
    const uint8 *area;
    qseg_iter   it;
    qseg_frame  f;
    MemoryContext rowcxt, oldcxt;
    uint32      i;

    InitMaterializedSRF(fcinfo, 0);
    if (PG_ARGISNULL(0))
        return (Datum) 0;
    if (PG_ARGISNULL(1))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("segment_decode: base_offset must not be NULL")));
    base = PG_GETARG_INT64(1);
    has_from = !PG_ARGISNULL(2);
    has_to = !PG_ARGISNULL(3);
    if (has_from)
        from = PG_GETARG_INT64(2);
    if (has_to)
        to = PG_GETARG_INT64(3);

    body = PG_GETARG_BYTEA_PP(0);
    ext_parse_header((const uint8 *) VARDATA_ANY(body), VARSIZE_ANY_EXHDR(body), &h);
    area = ext_frame_area(&h);
    ext_check_frames(area, &h);

    rowcxt = AllocSetContextCreate(CurrentMemoryContext, "queen_ext segment_decode row",
                                   ALLOCSET_DEFAULT_SIZES);
    qseg_iter_init(&it, area, h.raw_length, h.frame_count);
    for (i = 0; qseg_iter_next(&it, &f) == QSEG_OK; i++)
    {
        int64       off;

        /* An offset past the bigint range lies beyond any to_offset. */
        if (pg_add_s64_overflow(base, (int64) i, &off))
        {
            if (has_to)
                break;
            ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                            errmsg("segment_decode: offset of frame %u is out of range for type bigint",
                                   i)));
        }
        if (has_to && off > to)
            break;
        if (has_from && off < from)
            continue;
        CHECK_FOR_INTERRUPTS();
        oldcxt = MemoryContextSwitchTo(rowcxt);
        ext_put_frame(rsinfo, &f, i, off);
        MemoryContextSwitchTo(oldcxt);
        MemoryContextReset(rowcxt);
    }
    MemoryContextDelete(rowcxt);
    if (area != h.body)
        pfree((void *) area);
    return (Datum) 0;
}
