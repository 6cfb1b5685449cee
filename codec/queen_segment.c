/* Segment format v1 (docs/segment-format.md): header and frames.
 * C11, no allocation, no global mutable state; every length is checked against the bytes
 * that remain before it is used. All integers are big-endian. */
#include "queen_segment.h"

#include <string.h>

/* Fixed part of a frame after its 4-byte length prefix: created_at (8), txid_length (2),
 * trace_flag (1), producer_length (2), payload_length (4). */
#define QSEG_FRAME_FIXED 17u
#define QSEG_TRACE_SIZE 16u

static const uint8_t qseg_magic[4] = {0x51, 0x53, 0x45, 0x47}; /* "QSEG" */

static uint16_t get_be16(const uint8_t *p) {
    return (uint16_t)(((uint16_t)p[0] << 8) | (uint16_t)p[1]);
}

static uint32_t get_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) |
           (uint32_t)p[3];
}

static uint64_t get_be64(const uint8_t *p) {
    return ((uint64_t)get_be32(p) << 32) | (uint64_t)get_be32(p + 4);
}

static void put_be16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v) {
    put_be32(p, (uint32_t)(v >> 32));
    put_be32(p + 4, (uint32_t)v);
}

const char *qseg_status_text(qseg_status status) {
    switch (status) {
    case QSEG_OK: return "ok";
    case QSEG_END: return "end of frames";
    case QSEG_E_TRUNCATED: return "truncated";
    case QSEG_E_MAGIC: return "bad magic";
    case QSEG_E_VERSION: return "unsupported version";
    case QSEG_E_CODEC: return "unknown codec";
    case QSEG_E_FLAGS: return "bad flags";
    case QSEG_E_FRAME: return "corrupt frame";
    case QSEG_E_COUNT: return "frame count mismatch";
    case QSEG_E_LENGTH: return "raw length mismatch";
    case QSEG_E_ZSTD: return "zstd error";
    case QSEG_E_CAPACITY: return "output too small";
    case QSEG_E_FIELD_TOO_LONG: return "field too long";
    }
    return "unknown status";
}

/* Checks a frame to be written; on success *body_len gets its frame_length (the bytes
 * after the 4-byte prefix). */
static qseg_status check_frame(const qseg_frame *frame, uint32_t *body_len) {
    uint64_t len;
    if (frame == NULL) return QSEG_E_FRAME;
    if (frame->txid_len == 0 || frame->txid == NULL) return QSEG_E_FRAME;
    if (frame->txid_len > QSEG_MAX_TXID) return QSEG_E_FIELD_TOO_LONG;
    if (frame->producer != NULL && frame->producer_len > QSEG_MAX_PRODUCER)
        return QSEG_E_FIELD_TOO_LONG;
    if (frame->payload == NULL && frame->payload_len != 0) return QSEG_E_FRAME;
    len = (uint64_t)QSEG_FRAME_FIXED + frame->txid_len + frame->payload_len;
    if (frame->trace_id != NULL) len += QSEG_TRACE_SIZE;
    if (frame->producer != NULL) len += frame->producer_len;
    if (len > UINT32_MAX) return QSEG_E_FIELD_TOO_LONG;
    *body_len = (uint32_t)len;
    return QSEG_OK;
}

size_t qseg_frame_size(const qseg_frame *frame) {
    uint32_t body_len = 0;
    if (check_frame(frame, &body_len) != QSEG_OK) return 0;
    return (size_t)body_len + 4u;
}

qseg_status qseg_write_header(uint8_t *out, size_t cap, uint8_t codec, uint32_t frame_count,
                              uint32_t raw_length) {
    if (out == NULL || cap < QSEG_HEADER_SIZE) return QSEG_E_CAPACITY;
    if (codec != QSEG_CODEC_RAW && codec != QSEG_CODEC_ZSTD) return QSEG_E_CODEC;
    if (frame_count == 0) return QSEG_E_COUNT;
    memcpy(out, qseg_magic, 4);
    out[4] = QSEG_VERSION;
    out[5] = codec;
    put_be16(out + 6, 0);
    put_be32(out + 8, frame_count);
    put_be32(out + 12, raw_length);
    return QSEG_OK;
}

qseg_status qseg_write_frame(uint8_t *out, size_t cap, const qseg_frame *frame,
                             size_t *written) {
    uint32_t body_len = 0;
    size_t total;
    uint8_t *p;
    qseg_status st = check_frame(frame, &body_len);
    if (st != QSEG_OK) return st;
    total = (size_t)body_len + 4u;
    if (out == NULL || cap < total) return QSEG_E_CAPACITY;

    p = out;
    put_be32(p, body_len);
    p += 4;
    put_be64(p, (uint64_t)frame->created_at_us);
    p += 8;
    put_be16(p, frame->txid_len);
    p += 2;
    memcpy(p, frame->txid, frame->txid_len);
    p += frame->txid_len;
    if (frame->trace_id != NULL) {
        *p++ = 1;
        memcpy(p, frame->trace_id, QSEG_TRACE_SIZE);
        p += QSEG_TRACE_SIZE;
    } else {
        *p++ = 0;
    }
    if (frame->producer != NULL) {
        put_be16(p, frame->producer_len);
        p += 2;
        if (frame->producer_len != 0) memcpy(p, frame->producer, frame->producer_len);
        p += frame->producer_len;
    } else {
        put_be16(p, QSEG_PRODUCER_NULL);
        p += 2;
    }
    put_be32(p, frame->payload_len);
    p += 4;
    if (frame->payload_len != 0) memcpy(p, frame->payload, frame->payload_len);
    p += frame->payload_len;

    if (written != NULL) *written = (size_t)(p - out);
    return QSEG_OK;
}

qseg_status qseg_parse_header(const uint8_t *segment, size_t len, qseg_header *out) {
    uint8_t codec;
    uint32_t frame_count, raw_length;
    size_t body_len;
    if (segment == NULL || len < QSEG_HEADER_SIZE) return QSEG_E_TRUNCATED;
    if (memcmp(segment, qseg_magic, 4) != 0) return QSEG_E_MAGIC;
    if (segment[4] != QSEG_VERSION) return QSEG_E_VERSION;
    codec = segment[5];
    if (codec != QSEG_CODEC_RAW && codec != QSEG_CODEC_ZSTD) return QSEG_E_CODEC;
    if (get_be16(segment + 6) != 0) return QSEG_E_FLAGS;
    frame_count = get_be32(segment + 8);
    if (frame_count == 0) return QSEG_E_COUNT;
    raw_length = get_be32(segment + 12);
    body_len = len - QSEG_HEADER_SIZE;
    if (codec == QSEG_CODEC_RAW) {
        /* A short body is a cut-off segment; a long one has bytes past raw_length. */
        if (body_len < raw_length) return QSEG_E_TRUNCATED;
        if (body_len > raw_length) return QSEG_E_LENGTH;
    } else if (body_len == 0) {
        return QSEG_E_TRUNCATED;
    }
    if (out != NULL) {
        out->version = segment[4];
        out->codec = codec;
        out->frame_count = frame_count;
        out->raw_length = raw_length;
        out->body = segment + QSEG_HEADER_SIZE;
        out->body_len = body_len;
    }
    return QSEG_OK;
}

void qseg_iter_init(qseg_iter *it, const uint8_t *frames, size_t len, uint32_t frame_count) {
    if (it == NULL) return;
    it->pos = frames;
    it->end = frames != NULL ? frames + len : NULL;
    it->remaining = frame_count;
}

/* Parses the frame at it->pos. On error the iterator is left unchanged, so the same error
 * comes back on the next call. */
qseg_status qseg_iter_next(qseg_iter *it, qseg_frame *out) {
    const uint8_t *p, *fend;
    size_t avail;
    uint32_t flen, payload_len;
    uint16_t txid_len, producer_len;
    const uint8_t *trace = NULL;
    const char *producer = NULL;
    const char *txid, *payload;
    int64_t created_at;

    if (it == NULL) return QSEG_E_TRUNCATED;
    avail = (it->pos != NULL && it->end != NULL) ? (size_t)(it->end - it->pos) : 0;
    /* frame_count and the frames in the area disagree: bytes after the last counted
     * frame, or the area ends before frame_count frames. */
    if (it->remaining == 0) return avail == 0 ? QSEG_END : QSEG_E_COUNT;
    if (avail == 0) return QSEG_E_COUNT;
    if (avail < 4) return QSEG_E_TRUNCATED;

    p = it->pos;
    flen = get_be32(p);
    p += 4;
    if ((size_t)flen > avail - 4) return QSEG_E_TRUNCATED;
    fend = p + flen;

    /* From here on, a field that overruns frame_length is a corrupt frame. */
    if ((size_t)(fend - p) < 10) return QSEG_E_FRAME;
    created_at = (int64_t)get_be64(p);
    p += 8;
    txid_len = get_be16(p);
    p += 2;
    if (txid_len == 0 || txid_len > QSEG_MAX_TXID) return QSEG_E_FRAME;
    if ((size_t)(fend - p) < (size_t)txid_len + 1u) return QSEG_E_FRAME;
    txid = (const char *)p;
    p += txid_len;
    switch (*p++) {
    case 0: break;
    case 1:
        if ((size_t)(fend - p) < QSEG_TRACE_SIZE) return QSEG_E_FRAME;
        trace = p;
        p += QSEG_TRACE_SIZE;
        break;
    default: return QSEG_E_FRAME;
    }
    if ((size_t)(fend - p) < 2) return QSEG_E_FRAME;
    producer_len = get_be16(p);
    p += 2;
    if (producer_len == QSEG_PRODUCER_NULL) {
        producer_len = 0;
    } else {
        if (producer_len > QSEG_MAX_PRODUCER) return QSEG_E_FRAME;
        if ((size_t)(fend - p) < producer_len) return QSEG_E_FRAME;
        producer = (const char *)p;
        p += producer_len;
    }
    if ((size_t)(fend - p) < 4) return QSEG_E_FRAME;
    payload_len = get_be32(p);
    p += 4;
    if ((size_t)(fend - p) != (size_t)payload_len) return QSEG_E_FRAME;
    payload = (const char *)p;

    if (out != NULL) {
        out->created_at_us = created_at;
        out->txid = txid;
        out->txid_len = txid_len;
        out->trace_id = trace;
        out->producer = producer;
        out->producer_len = producer_len;
        out->payload = payload;
        out->payload_len = payload_len;
    }
    it->pos = fend;
    it->remaining--;
    return QSEG_OK;
}

qseg_status qseg_validate_frames(const uint8_t *frames, size_t len, uint32_t frame_count) {
    qseg_iter it;
    qseg_frame frame;
    qseg_status st;
    qseg_iter_init(&it, frames, len, frame_count);
    do {
        st = qseg_iter_next(&it, &frame);
    } while (st == QSEG_OK);
    return st == QSEG_END ? QSEG_OK : st;
}
