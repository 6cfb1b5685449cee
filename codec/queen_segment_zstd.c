/* zstd codec for segment frame areas (docs/segment-format.md). The contexts belong to the
 * caller; this file allocates nothing and keeps no state. */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_decompressBound */
#include "queen_segment_zstd.h"

#include <zstd_errors.h>

size_t qseg_zstd_bound(size_t raw_len) {
    return ZSTD_compressBound(raw_len);
}

qseg_status qseg_zstd_compress(ZSTD_CCtx *cctx, int level, const uint8_t *frames,
                               size_t raw_len, uint8_t *out, size_t cap, size_t *written) {
    size_t n;
    if (cctx == NULL || (frames == NULL && raw_len != 0)) return QSEG_E_ZSTD;
    if (out == NULL) return QSEG_E_CAPACITY;
    /* ZSTD_compressCCtx ignores advanced parameters left on cctx and always records the
     * content size in the frame header, so the output depends only on input and level. */
    n = ZSTD_compressCCtx(cctx, out, cap, frames, raw_len, level);
    if (ZSTD_isError(n)) {
        return ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall ? QSEG_E_CAPACITY
                                                                   : QSEG_E_ZSTD;
    }
    if (written != NULL) *written = n;
    return QSEG_OK;
}

qseg_status qseg_zstd_check(const qseg_header *header) {
    unsigned long long content_size, bound;
    size_t frame_size;
    if (header == NULL) return QSEG_E_ZSTD;
    if (header->codec != QSEG_CODEC_ZSTD) return QSEG_E_CODEC;
    if (header->body == NULL || header->body_len == 0) return QSEG_E_TRUNCATED;
    /* The body must be exactly one zstd frame. */
    frame_size = ZSTD_findFrameCompressedSize(header->body, header->body_len);
    if (ZSTD_isError(frame_size) || frame_size != header->body_len) return QSEG_E_ZSTD;
    content_size = ZSTD_getFrameContentSize(header->body, header->body_len);
    if (content_size == ZSTD_CONTENTSIZE_ERROR) return QSEG_E_ZSTD;
    if (content_size != ZSTD_CONTENTSIZE_UNKNOWN && content_size != header->raw_length)
        return QSEG_E_LENGTH;
    /* What the blocks can produce at most: a corrupt header cannot make a reader allocate
     * far more than the compressed bytes can decompress to. */
    bound = ZSTD_decompressBound(header->body, header->body_len);
    if (bound == ZSTD_CONTENTSIZE_ERROR || bound < header->raw_length) return QSEG_E_LENGTH;
    return QSEG_OK;
}

qseg_status qseg_zstd_decompress(ZSTD_DCtx *dctx, const qseg_header *header, uint8_t *out,
                                 size_t cap) {
    size_t n;
    qseg_status st;
    if (dctx == NULL || header == NULL) return QSEG_E_ZSTD;
    st = qseg_zstd_check(header);
    if (st != QSEG_OK) return st;
    if (cap < header->raw_length || (out == NULL && header->raw_length != 0))
        return QSEG_E_CAPACITY;

    /* Capacity raw_length, not cap: more output than raw_length is a mismatch too. */
    n = ZSTD_decompressDCtx(dctx, out, header->raw_length, header->body, header->body_len);
    if (ZSTD_isError(n)) {
        return ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall ? QSEG_E_LENGTH
                                                                   : QSEG_E_ZSTD;
    }
    if (n != header->raw_length) return QSEG_E_LENGTH;
    return QSEG_OK;
}
