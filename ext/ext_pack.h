/* queen_ext: frames packed into a segment with the shared codec (ext/segment_pack.c). */
#ifndef QUEEN_EXT_PACK_H
#define QUEEN_EXT_PACK_H

/* Include after postgres.h. */
#include "queen_segment.h"

typedef enum ext_codec
{
    EXT_CODEC_RAW,
    EXT_CODEC_ZSTD,
    EXT_CODEC_AUTO
} ext_codec;

/* A segment of the n checked frames, in order, whose qseg_frame_size values sum to raw:
 * raw (codec 0) for EXT_CODEC_RAW, zstd at `level` for EXT_CODEC_ZSTD, and for EXT_CODEC_AUTO
 * the zstd one only when it is smaller. Raises 54000 when the segment would not fit a bytea
 * or raw_length would reach 2^32. */
extern bytea *ext_pack_frames(const qseg_frame *frames, uint32 n, uint64 raw, ext_codec codec,
                              int level);

#endif
