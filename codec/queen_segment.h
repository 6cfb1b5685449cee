/* Segment format v1 (docs/segment-format.md): the one codec shared by broker and extension.
 * C11, no allocation of its own, no global state, errors as status codes. */
#ifndef QUEEN_SEGMENT_H
#define QUEEN_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QSEG_HEADER_SIZE 16
#define QSEG_VERSION 1
#define QSEG_CODEC_RAW 0
#define QSEG_CODEC_ZSTD 1
#define QSEG_MAX_TXID 255
#define QSEG_MAX_PRODUCER 1024
#define QSEG_PRODUCER_NULL 0xFFFF

typedef enum qseg_status {
    QSEG_OK = 0,
    QSEG_END,               /* iterator: no more frames (not an error) */
    QSEG_E_TRUNCATED,
    QSEG_E_MAGIC,
    QSEG_E_VERSION,
    QSEG_E_CODEC,
    QSEG_E_FLAGS,
    QSEG_E_FRAME,
    QSEG_E_COUNT,
    QSEG_E_LENGTH,
    QSEG_E_ZSTD,
    QSEG_E_CAPACITY,
    QSEG_E_FIELD_TOO_LONG
} qseg_status;

/* One message. Pointers borrow from the caller (writing) or from the frame area (reading). */
typedef struct qseg_frame {
    int64_t created_at_us;       /* microseconds since the Unix epoch, UTC */
    const char *txid;
    uint16_t txid_len;           /* 1..QSEG_MAX_TXID */
    const uint8_t *trace_id;     /* 16 bytes, or NULL for none */
    const char *producer;        /* NULL for none */
    uint16_t producer_len;       /* 0..QSEG_MAX_PRODUCER, ignored when producer is NULL */
    const char *payload;
    uint32_t payload_len;
} qseg_frame;

typedef struct qseg_header {
    uint8_t version;
    uint8_t codec;
    uint32_t frame_count;
    uint32_t raw_length;
    const uint8_t *body;         /* bytes after the header */
    size_t body_len;
} qseg_header;

typedef struct qseg_iter {
    const uint8_t *pos;
    const uint8_t *end;
    uint32_t remaining;
} qseg_iter;

/* Human-readable, static text for a status. */
const char *qseg_status_text(qseg_status status);

/* Encoded size of one frame including its length prefix; 0 if a field is too long. */
size_t qseg_frame_size(const qseg_frame *frame);

/* Writes a 16-byte header; QSEG_E_CAPACITY if cap < QSEG_HEADER_SIZE. */
qseg_status qseg_write_header(uint8_t *out, size_t cap, uint8_t codec,
                              uint32_t frame_count, uint32_t raw_length);

/* Appends one frame at out; *written gets its size. Fails without writing on bad input. */
qseg_status qseg_write_frame(uint8_t *out, size_t cap, const qseg_frame *frame,
                             size_t *written);

/* Parses and checks the header (magic, version, codec, flags, raw-body length for raw). */
qseg_status qseg_parse_header(const uint8_t *segment, size_t len, qseg_header *out);

/* Starts iterating frame_count frames over a raw frame area of len bytes. */
void qseg_iter_init(qseg_iter *it, const uint8_t *frames, size_t len, uint32_t frame_count);

/* Next frame into *out: QSEG_OK, QSEG_END after the last one (and the area is exactly
 * consumed), or an error for corrupt input. */
qseg_status qseg_iter_next(qseg_iter *it, qseg_frame *out);

/* Checks a whole raw frame area: exactly frame_count well-formed frames, no trailing bytes. */
qseg_status qseg_validate_frames(const uint8_t *frames, size_t len, uint32_t frame_count);

#ifdef __cplusplus
}
#endif

#endif
