/* queen_ext.segment_pack: frames from parallel arrays, packed into a raw or zstd segment
 * with the shared codec. Arguments follow queen.segment_pack_raw's rules (10_codec.sql). */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "queen_segment.h"
#include "queen_segment_zstd.h"

#include "ext_convert.h"
#include "ext_pack.h"
#include "ext_zstd.h"

#define EXT_MIN_LEVEL 1
#define EXT_MAX_LEVEL 19

/* One array argument, deconstructed; elems/nulls are NULL when the argument is NULL. */
typedef struct ext_array
{
    Datum      *elems;
    bool       *nulls;
    int         n;
} ext_array;

#define ext_bad_argument(...) \
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg(__VA_ARGS__)))

/* The codec named by argument 5, or 22023. */
static ext_codec
ext_codec_argument(FunctionCallInfo fcinfo)
{
    char       *name;

    if (PG_ARGISNULL(5))
        ext_bad_argument("segment_pack: codec must be 'raw', 'zstd' or 'auto', not NULL");
    name = text_to_cstring(PG_GETARG_TEXT_PP(5));
    if (strcmp(name, "raw") == 0)
        return EXT_CODEC_RAW;
    if (strcmp(name, "zstd") == 0)
        return EXT_CODEC_ZSTD;
    if (strcmp(name, "auto") == 0)
        return EXT_CODEC_AUTO;
    ext_bad_argument("segment_pack: unknown codec \"%s\" (expected 'raw', 'zstd' or 'auto')",
                     name);
    pg_unreachable();
}

/* Argument argno as a detoasted array, or NULL. */
static ArrayType *
ext_array_arg(FunctionCallInfo fcinfo, int argno)
{
    return PG_ARGISNULL(argno) ? NULL : PG_GETARG_ARRAYTYPE_P(argno);
}

/* True if a is a one-dimensional array of n elements. */
static bool
ext_has_n_elements(ArrayType *a, int n)
{
    return ARR_NDIM(a) == 1 && ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a)) == n;
}

/* Deconstructs a (of a built-in element type) into *out; a NULL array stays NULL. */
static void
ext_deconstruct(ArrayType *a, Oid elemtype, int elemlen, bool byval, char align,
                ext_array *out)
{
    out->elems = NULL;
    out->nulls = NULL;
    out->n = 0;
    if (a != NULL)
        deconstruct_array(a, elemtype, elemlen, byval, align, &out->elems, &out->nulls,
                          &out->n);
}

/* Raises 54000 for frames that cannot form a segment: raw_length must stay below 2^32 and
 * the raw segment (which is built first, also for zstd) must fit a bytea. */
static void
ext_check_segment_size(uint64 raw)
{
    if (raw > PG_UINT32_MAX)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("segment_pack: oversized payload (the frames take " UINT64_FORMAT " bytes, raw_length must be below 4 GiB)",
                               raw)));
    if (raw + VARHDRSZ + QSEG_HEADER_SIZE > MaxAllocSize)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("segment_pack: oversized payload (a segment of " UINT64_FORMAT " bytes exceeds the 1 GB limit)",
                               raw + QSEG_HEADER_SIZE)));
}

/* Compresses the frame area of the raw segment `raw` into a new zstd segment; NULL if the
 * compressed segment would not fit a bytea. */
static bytea *
ext_compress(const bytea *raw, uint32 frame_count, uint32 raw_length, int level)
{
    const uint8 *frames = (const uint8 *) VARDATA(raw) + QSEG_HEADER_SIZE;
    size_t      cap = Min(qseg_zstd_bound(raw_length),
                          (size_t) (MaxAllocSize - VARHDRSZ - QSEG_HEADER_SIZE));
    bytea      *z = (bytea *) palloc(VARHDRSZ + QSEG_HEADER_SIZE + cap);
    uint8      *out = (uint8 *) VARDATA(z);
    size_t      written = 0;
    qseg_status st;

    st = qseg_zstd_compress(ext_zstd_cctx(), level, frames, raw_length,
                            out + QSEG_HEADER_SIZE, cap, &written);
    ext_zstd_trim();
    if (st == QSEG_E_CAPACITY)
    {
        pfree(z);
        return NULL;
    }
    if (st != QSEG_OK)
        ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                        errmsg("segment_pack: zstd compression failed (%s)",
                               qseg_status_text(st))));
    st = qseg_write_header(out, QSEG_HEADER_SIZE, QSEG_CODEC_ZSTD, frame_count, raw_length);
    if (st != QSEG_OK)
        elog(ERROR, "segment_pack: cannot write header (%s)", qseg_status_text(st));
    /* Give back what the bound over-reserved, unless it is little. */
    if (cap - written > 8192)
        z = (bytea *) repalloc(z, VARHDRSZ + QSEG_HEADER_SIZE + written);
    SET_VARSIZE(z, VARHDRSZ + QSEG_HEADER_SIZE + written);
    return z;
}

/* Packs frames into a raw segment, then for codec zstd or auto compresses it (see
 * ext_pack.h). */
bytea *
ext_pack_frames(const qseg_frame *frames, uint32 n, uint64 raw, ext_codec codec, int level)
{
    uint32      raw_length;
    bytea      *seg;
    uint8      *out;
    size_t      pos;
    qseg_status st;
    uint32      i;

    ext_check_segment_size(raw);
    raw_length = (uint32) raw;

    /* The raw segment: header, then the frames in array order. */
    seg = (bytea *) palloc(VARHDRSZ + QSEG_HEADER_SIZE + raw);
    SET_VARSIZE(seg, VARHDRSZ + QSEG_HEADER_SIZE + raw);
    out = (uint8 *) VARDATA(seg);
    st = qseg_write_header(out, QSEG_HEADER_SIZE, QSEG_CODEC_RAW, n, raw_length);
    pos = QSEG_HEADER_SIZE;
    for (i = 0; i < n && st == QSEG_OK; i++)
    {
        size_t      written = 0;

        st = qseg_write_frame(out + pos, QSEG_HEADER_SIZE + raw - pos, &frames[i], &written);
        pos += written;
    }
    if (st != QSEG_OK || pos != QSEG_HEADER_SIZE + raw)
        elog(ERROR, "segment_pack: frame %u could not be written (%s)", i,
             qseg_status_text(st));

    if (codec != EXT_CODEC_RAW)
    {
        bytea      *z = ext_compress(seg, n, raw_length, level);

        if (z == NULL && codec == EXT_CODEC_ZSTD)
            ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                            errmsg("segment_pack: oversized payload (the zstd segment exceeds the 1 GB limit)")));
        if (z != NULL && (codec == EXT_CODEC_ZSTD || VARSIZE(z) < VARSIZE(seg)))
        {
            pfree(seg);
            seg = z;
        }
        else if (z != NULL)
            pfree(z);
    }
    return seg;
}

PG_FUNCTION_INFO_V1(queen_ext_segment_pack);

/* Returns a segment holding one frame per txid, in array order, byte-identical for codec
 * 'raw' to queen.segment_pack_raw; raises 22023 for bad arguments, 54000 for oversize. */
Datum
queen_ext_segment_pack(PG_FUNCTION_ARGS)
{
    ext_codec   codec = ext_codec_argument(fcinfo);
    int         level;
    int         n;
    ArrayType  *a_created, *a_txids, *a_traces, *a_producers, *a_payloads;
    ext_array   created, txids, traces, producers, payloads;
    qseg_frame *frames;
    uint64      raw = 0;
    bytea      *seg;
    int         i;

    level = PG_ARGISNULL(6) ? 0 : PG_GETARG_INT32(6);
    if (level < EXT_MIN_LEVEL || level > EXT_MAX_LEVEL)
        ext_bad_argument("segment_pack: level must be %d..%d", EXT_MIN_LEVEL, EXT_MAX_LEVEL);

    a_created = ext_array_arg(fcinfo, 0);
    a_txids = ext_array_arg(fcinfo, 1);
    a_traces = ext_array_arg(fcinfo, 2);
    a_producers = ext_array_arg(fcinfo, 3);
    a_payloads = ext_array_arg(fcinfo, 4);
    n = a_txids == NULL ? 0 : ArrayGetNItems(ARR_NDIM(a_txids), ARR_DIMS(a_txids));
    if (n == 0 || ARR_NDIM(a_txids) != 1)
        ext_bad_argument("segment_pack: txids must be a non-empty one-dimensional array");
    if (a_created == NULL || !ext_has_n_elements(a_created, n) ||
        a_payloads == NULL || !ext_has_n_elements(a_payloads, n) ||
        (a_traces != NULL && !ext_has_n_elements(a_traces, n)) ||
        (a_producers != NULL && !ext_has_n_elements(a_producers, n)))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("segment_pack: created_ats, payloads, trace_ids and producers must have as many elements as txids (%d)", n),
                        errhint("trace_ids and producers may be NULL (no trace id, no producer for every frame) or have NULL elements.")));
    /* Every frame takes at least 22 bytes: refuse what cannot be a segment before
     * allocating per-frame memory for it. */
    if ((uint64) n * 22u + VARHDRSZ + QSEG_HEADER_SIZE > MaxAllocSize)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("segment_pack: oversized payload (%d frames exceed the 1 GB limit)",
                               n)));

    ext_deconstruct(a_created, TIMESTAMPTZOID, sizeof(TimestampTz), FLOAT8PASSBYVAL,
                    TYPALIGN_DOUBLE, &created);
    ext_deconstruct(a_txids, TEXTOID, -1, false, TYPALIGN_INT, &txids);
    ext_deconstruct(a_traces, UUIDOID, UUID_LEN, false, TYPALIGN_CHAR, &traces);
    ext_deconstruct(a_producers, TEXTOID, -1, false, TYPALIGN_INT, &producers);
    ext_deconstruct(a_payloads, TEXTOID, -1, false, TYPALIGN_INT, &payloads);

    frames = (qseg_frame *) MemoryContextAllocHuge(CurrentMemoryContext,
                                                   sizeof(qseg_frame) * (Size) n);

    /* One argument at a time, first bad element first, in segment_pack_raw's order. */
    for (i = 0; i < n; i++)
    {
        TimestampTz ts = DatumGetTimestampTz(created.elems[i]);

        if (created.nulls[i] || TIMESTAMP_NOT_FINITE(ts))
            ext_bad_argument("segment_pack: created_at %d must be a finite timestamp", i + 1);
        if (!ext_timestamptz_to_unix_us(ts, &frames[i].created_at_us))
            ext_bad_argument("segment_pack: created_at %d (%s) is beyond the 64-bit microsecond range",
                             i + 1, timestamptz_to_str(ts));
    }
    for (i = 0; i < n; i++)
    {
        size_t      len = 0;

        if (!txids.nulls[i])
            frames[i].txid = ext_text_to_utf8(DatumGetTextPP(txids.elems[i]), &len);
        if (txids.nulls[i] || len < 1 || len > QSEG_MAX_TXID)
            ext_bad_argument("segment_pack: transaction id %d must be 1..%d bytes", i + 1,
                             QSEG_MAX_TXID);
        frames[i].txid_len = (uint16) len;
        CHECK_FOR_INTERRUPTS();
    }
    for (i = 0; i < n; i++)
    {
        size_t      len = 0;

        frames[i].producer = NULL;
        frames[i].producer_len = 0;
        if (producers.elems == NULL || producers.nulls[i])
            continue;
        frames[i].producer = ext_text_to_utf8(DatumGetTextPP(producers.elems[i]), &len);
        if (len > QSEG_MAX_PRODUCER)
            ext_bad_argument("segment_pack: producer %d is longer than %d bytes", i + 1,
                             QSEG_MAX_PRODUCER);
        frames[i].producer_len = (uint16) len;
    }
    for (i = 0; i < n; i++)
    {
        size_t      len;

        if (payloads.nulls[i])
            ext_bad_argument("segment_pack: payload %d is NULL", i + 1);
        frames[i].payload = ext_text_to_utf8(DatumGetTextPP(payloads.elems[i]), &len);
        frames[i].payload_len = (uint32) len;  /* a text value is below 1 GB */
        frames[i].trace_id = (traces.elems == NULL || traces.nulls[i])
            ? NULL : DatumGetUUIDP(traces.elems[i])->data;
        raw += qseg_frame_size(&frames[i]);
        CHECK_FOR_INTERRUPTS();
    }
    seg = ext_pack_frames(frames, (uint32) n, raw, codec, level);
    pfree(frames);
    PG_RETURN_BYTEA_P(seg);
}
