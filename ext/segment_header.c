/* queen_ext.segment_header: the checked header of a segment, reading only its first
 * 16 bytes (a sliced detoast). */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "queen_segment.h"

#include "ext_errors.h"

PG_FUNCTION_INFO_V1(queen_ext_segment_header);

/* Returns (codec, frame_count, raw_length, stored_length) of a segment whose header is
 * valid, or raises XX001 as queen.segment_header does; never detoasts the whole value. */
Datum
queen_ext_segment_header(PG_FUNCTION_ARGS)
{
    Datum       raw = PG_GETARG_DATUM(0);
    size_t      total = toast_raw_datum_size(raw) - VARHDRSZ;
    bytea      *head = PG_GETARG_BYTEA_P_SLICE(0, 0, QSEG_HEADER_SIZE);
    qseg_header h;
    TupleDesc   tupdesc;
    Datum       values[4];
    bool        nulls[4] = {false};

    if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "segment_header: return type must be a row type");
    /* head holds Min(total, 16) bytes: all that ext_parse_header reads. */
    ext_parse_header((const uint8 *) VARDATA_ANY(head), total, &h);

    values[0] = CStringGetTextDatum(h.codec == QSEG_CODEC_ZSTD ? "zstd" : "raw");
    values[1] = Int32GetDatum((int32) h.frame_count);  /* < 2^31: frames take >= 22 bytes */
    values[2] = Int64GetDatum((int64) h.raw_length);
    values[3] = Int32GetDatum((int32) total);           /* a bytea is below 1 GB */
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values,
                                                      nulls)));
}
