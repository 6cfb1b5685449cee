/* queen_ext: codec status codes (codec/queen_segment.h) raised as PostgreSQL errors.
 *
 * Every corrupt segment raises SQLSTATE XX001 (data_corrupted) with a message
 * "segment: <qseg_status_text> (<detail>)" worded like the pure-SQL codec in
 * sql/procedures/10_codec.sql. These functions are called only when nothing but palloc'd
 * memory is held, so the longjmp of ereport leaks nothing. */
#ifndef QUEEN_EXT_ERRORS_H
#define QUEEN_EXT_ERRORS_H

/* Include after postgres.h. */
#include "queen_segment.h"

/* Smallest frame: length prefix, created_at, txid_length, 1-byte txid, trace_flag,
 * producer_length, payload_length. A header whose frame_count * this exceeds raw_length
 * is corrupt (the SQL codec and the broker check the same). */
#define EXT_MIN_FRAME_SIZE 22u

/* Parses and checks a segment header, or raises XX001. `bytes` must hold the first
 * Min(total_len, QSEG_HEADER_SIZE) bytes of a segment of total_len bytes; only those are
 * read (out->body points into `bytes` and is valid only if all total_len bytes are there).
 * Also rejects a frame_count that cannot fit in raw_length. */
extern void ext_parse_header(const uint8 *bytes, size_t total_len, qseg_header *out);

/* Raises XX001 for a frame walk that failed with `status`. `it` is the iterator as
 * qseg_iter_next left it (at the failing frame), `index` the 0-based index of that frame,
 * `area` the start of the frame area (positions are reported as segment byte offsets). */
extern void ext_raise_frame_error(qseg_status status, const qseg_iter *it, uint32 index,
                                  uint32 frame_count, const uint8 *area)
    pg_attribute_noreturn();

/* Raises XX001 for a zstd body that qseg_zstd_check or qseg_zstd_decompress rejected. */
extern void ext_raise_zstd_error(qseg_status status, const qseg_header *header,
                                 bool decompressing) pg_attribute_noreturn();

#endif
