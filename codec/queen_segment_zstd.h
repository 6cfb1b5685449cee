/* zstd codec for segment frame areas. Contexts are the caller's, so this file allocates nothing. */
#ifndef QUEEN_SEGMENT_ZSTD_H
#define QUEEN_SEGMENT_ZSTD_H

#include "queen_segment.h"
#include <zstd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Upper bound of the compressed size of raw_len frame bytes. */
size_t qseg_zstd_bound(size_t raw_len);

/* Compresses a raw frame area into out (after a header the caller writes); *written gets
 * the compressed size. */
qseg_status qseg_zstd_compress(ZSTD_CCtx *cctx, int level, const uint8_t *frames,
                               size_t raw_len, uint8_t *out, size_t cap, size_t *written);

/* Checks a zstd segment before anything is allocated for it: one zstd frame, a content size
 * that agrees with raw_length, and blocks that can really decompress to raw_length bytes. */
qseg_status qseg_zstd_check(const qseg_header *header);

/* Decompresses the body of a zstd segment into out, which must hold header->raw_length
 * bytes; fails unless exactly raw_length bytes come out. */
qseg_status qseg_zstd_decompress(ZSTD_DCtx *dctx, const qseg_header *header, uint8_t *out,
                                 size_t cap);

#ifdef __cplusplus
}
#endif

#endif
