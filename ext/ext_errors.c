/* queen_ext: codec status codes raised as PostgreSQL errors (see ext_errors.h). The codec
 * decides whether a segment is corrupt; this file only words the error, re-reading the
 * bytes at the failing position for the detail the SQL codec gives. */
#include "postgres.h"

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_decompressBound */
#include <zstd.h>
#include <zstd_errors.h>

#include "ext_errors.h"

#define EXT_TRACE_SIZE 16u

/* The big-endian 16-bit value at p. */
static uint16
ext_be16(const uint8 *p)
{
    return (uint16) ((p[0] << 8) | p[1]);
}

/* The big-endian 32-bit value at p. */
static uint32
ext_be32(const uint8 *p)
{
    return ((uint32) p[0] << 24) | ((uint32) p[1] << 16) | ((uint32) p[2] << 8) | (uint32) p[3];
}

/* Raises XX001 (data_corrupted) with a printf-style message. */
#define ext_corrupt(...) \
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg(__VA_ARGS__)))

/* Never returns: XX001 for a header qseg_parse_header rejected, in queen.segment_header's
 * words. */
static void
ext_raise_header_error(qseg_status status, const uint8 *b, size_t len)
{
    if (len < QSEG_HEADER_SIZE)
        ext_corrupt("segment: truncated header (%zu bytes, need %d)", len, QSEG_HEADER_SIZE);
    switch (status)
    {
        case QSEG_E_MAGIC:
            ext_corrupt("segment: %s (%02x%02x%02x%02x)", qseg_status_text(status),
                        b[0], b[1], b[2], b[3]);
            break;
        case QSEG_E_VERSION:
            ext_corrupt("segment: %s %u", qseg_status_text(status), b[4]);
            break;
        case QSEG_E_CODEC:
            ext_corrupt("segment: %s %u", qseg_status_text(status), b[5]);
            break;
        case QSEG_E_FLAGS:
            ext_corrupt("segment: %s %02x%02x", qseg_status_text(status), b[6], b[7]);
            break;
        case QSEG_E_COUNT:
            ext_corrupt("segment: %s (frame_count is 0)", qseg_status_text(status));
            break;
        case QSEG_E_TRUNCATED:
        case QSEG_E_LENGTH:
            if (b[5] == QSEG_CODEC_ZSTD)
                ext_corrupt("segment: %s (empty zstd body)", qseg_status_text(status));
            ext_corrupt("segment: %s (body is %zu bytes, raw_length is %u)",
                        qseg_status_text(status), len - QSEG_HEADER_SIZE, ext_be32(b + 12));
            break;
        default:
            ext_corrupt("segment: %s (header)", qseg_status_text(status));
            break;
    }
}

/* Returns only for a valid header (see ext_errors.h); raises XX001 otherwise. */
void
ext_parse_header(const uint8 *bytes, size_t total_len, qseg_header *out)
{
    /* qseg_parse_header reads only the 16 header bytes; total_len gives the body length. */
    qseg_status st = qseg_parse_header(bytes, total_len, out);

    if (st == QSEG_OK || ((st == QSEG_E_TRUNCATED || st == QSEG_E_LENGTH) &&
                          total_len >= QSEG_HEADER_SIZE))
    {
        uint32      count = ext_be32(bytes + 8);
        uint32      raw_length = ext_be32(bytes + 12);

        if ((uint64) count * EXT_MIN_FRAME_SIZE > raw_length)
            ext_corrupt("segment: %s (%u frames cannot fit in raw_length %u)",
                        qseg_status_text(QSEG_E_COUNT), count, raw_length);
    }
    if (st != QSEG_OK)
        ext_raise_header_error(st, bytes, total_len);
}

/* Words a QSEG_E_FRAME for the frame at p (flen bytes after its length prefix), walking its
 * fields in the order qseg_iter_next checks them. */
static void
ext_raise_corrupt_frame(const uint8 *p, uint32 flen, uint32 index)
{
    const char *what = qseg_status_text(QSEG_E_FRAME);
    const uint8 *fend = p + flen;
    uint16      txid_len, producer_len;
    uint32      payload_len;

    if (flen < 10)
        ext_corrupt("segment: %s %u (frame_length %u is too short)", what, index, flen);
    p += 8;
    txid_len = ext_be16(p);
    p += 2;
    if (txid_len == 0 || txid_len > QSEG_MAX_TXID)
        ext_corrupt("segment: %s %u (txid_length %u is not 1..%d)", what, index, txid_len,
                    QSEG_MAX_TXID);
    if ((size_t) (fend - p) < (size_t) txid_len + 1u)
        ext_corrupt("segment: %s %u (transaction id overruns frame_length)", what, index);
    p += txid_len;
    switch (*p++)
    {
        case 0:
            break;
        case 1:
            if ((size_t) (fend - p) < EXT_TRACE_SIZE)
                ext_corrupt("segment: %s %u (trace id overruns frame_length)", what, index);
            p += EXT_TRACE_SIZE;
            break;
        default:
            ext_corrupt("segment: %s %u (trace_flag is %u)", what, index, p[-1]);
    }
    if (fend - p < 2)
        ext_corrupt("segment: %s %u (producer_length overruns frame_length)", what, index);
    producer_len = ext_be16(p);
    p += 2;
    if (producer_len != QSEG_PRODUCER_NULL)
    {
        if (producer_len > QSEG_MAX_PRODUCER)
            ext_corrupt("segment: %s %u (producer_length %u is over %d)", what, index,
                        producer_len, QSEG_MAX_PRODUCER);
        if ((size_t) (fend - p) < producer_len)
            ext_corrupt("segment: %s %u (producer overruns frame_length)", what, index);
        p += producer_len;
    }
    if (fend - p < 4)
        ext_corrupt("segment: %s %u (payload_length overruns frame_length)", what, index);
    payload_len = ext_be32(p);
    p += 4;
    ext_corrupt("segment: %s %u (payload_length %u but %zu bytes left in the frame)", what,
                index, payload_len, (size_t) (fend - p));
}

/* Never returns: XX001 with the SQL codec's detail for the failing frame. */
void
ext_raise_frame_error(qseg_status status, const qseg_iter *it, uint32 index,
                      uint32 frame_count, const uint8 *area)
{
    size_t      avail = (size_t) (it->end - it->pos);
    size_t      at = (size_t) (it->pos - area) + QSEG_HEADER_SIZE;

    switch (status)
    {
        case QSEG_E_COUNT:
            if (it->remaining > 0)
                ext_corrupt("segment: %s (frame_count is %u, the frames end after %u)",
                            qseg_status_text(status), frame_count, index);
            ext_corrupt("segment: %s (%zu bytes after frame_count %u frames)",
                        qseg_status_text(status), avail, frame_count);
            break;
        case QSEG_E_TRUNCATED:
            if (avail < 4)
                ext_corrupt("segment: %s (frame %u at byte %zu)", qseg_status_text(status),
                            index, at);
            ext_corrupt("segment: %s (frame %u at byte %zu has frame_length %u, %zu bytes remain)",
                        qseg_status_text(status), index, at, ext_be32(it->pos), avail - 4);
            break;
        case QSEG_E_FRAME:
            ext_raise_corrupt_frame(it->pos + 4, ext_be32(it->pos), index);
            break;
        default:
            break;
    }
    ext_corrupt("segment: %s (frame %u at byte %zu)", qseg_status_text(status), index, at);
}

/* Never returns: XX001 with what is wrong with the zstd body. */
void
ext_raise_zstd_error(qseg_status status, const qseg_header *h, bool decompressing)
{
    const char *what = qseg_status_text(status);

    if (status == QSEG_E_ZSTD && !decompressing)
    {
        size_t      frame_size = ZSTD_findFrameCompressedSize(h->body, h->body_len);

        if (ZSTD_isError(frame_size) && ZSTD_getErrorCode(frame_size) == ZSTD_error_prefix_unknown)
            ext_corrupt("segment: %s (the body is not a zstd frame)", what);
        if (ZSTD_isError(frame_size) && ZSTD_getErrorCode(frame_size) == ZSTD_error_srcSize_wrong)
            ext_corrupt("segment: %s (the zstd frame is cut short)", what);
        if (ZSTD_isError(frame_size))
            ext_corrupt("segment: %s (%s)", what, ZSTD_getErrorName(frame_size));
        if (frame_size != h->body_len)
            ext_corrupt("segment: %s (the zstd frame ends at byte %zu of a %zu-byte body)", what,
                        frame_size, h->body_len);
        ext_corrupt("segment: %s (bad zstd frame header)", what);
    }
    if (status == QSEG_E_LENGTH && !decompressing)
    {
        unsigned long long size = ZSTD_getFrameContentSize(h->body, h->body_len);

        if (size != ZSTD_CONTENTSIZE_UNKNOWN && size != ZSTD_CONTENTSIZE_ERROR &&
            size != h->raw_length)
            ext_corrupt("segment: %s (zstd content size is %llu, raw_length is %u)", what,
                        size, h->raw_length);
        size = ZSTD_decompressBound(h->body, h->body_len);
        if (size == ZSTD_CONTENTSIZE_ERROR)
            ext_corrupt("segment: %s (the zstd blocks are corrupt)", what);
        ext_corrupt("segment: %s (the zstd body decompresses to at most %llu bytes, raw_length is %u)",
                    what, size, h->raw_length);
    }
    if (status == QSEG_E_LENGTH)
        ext_corrupt("segment: %s (the zstd body does not decompress to raw_length %u bytes)",
                    what, h->raw_length);
    if (status == QSEG_E_ZSTD)
        ext_corrupt("segment: %s (the zstd body does not decompress)", what);
    ext_corrupt("segment: %s (zstd body)", what);
}
