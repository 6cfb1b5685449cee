#pragma once
// C++ layer over the segment codec (codec/queen_segment.h, docs/segment-format.md):
// encode frames into a v1 segment, decode a segment into views of its frames.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "queen_segment.h"

namespace queen::segment {

enum class codec : std::uint8_t { raw = QSEG_CODEC_RAW, zstd = QSEG_CODEC_ZSTD };

// Bad input to encode, or a corrupt segment given to decode; status() says which.
class segment_error : public std::runtime_error {
public:
    explicit segment_error(qseg_status status);
    segment_error(qseg_status status, const std::string& context);
    qseg_status status() const noexcept { return status_; }

private:
    qseg_status status_;
};

// One message of a segment. The views borrow: from the caller when encoding, from the
// input (raw) or from the decoded_segment's own buffer (zstd) when decoding.
struct frame_view {
    std::int64_t created_at_us = 0;   // microseconds since the Unix epoch, UTC
    std::string_view transaction_id;  // 1..255 bytes
    std::optional<std::array<std::uint8_t, 16>> trace_id;
    std::optional<std::string_view> producer_sub;  // 0..1024 bytes when present
    std::string_view payload;
};

// Builds a segment of frames (at least one) with codec c. Throws segment_error on bad input
// (QSEG_E_COUNT for no frames, QSEG_E_FRAME for an empty transaction id,
// QSEG_E_FIELD_TOO_LONG for a field over its limit, QSEG_E_LENGTH if the frame area would
// reach 4 GiB, QSEG_E_CODEC for an unknown codec, QSEG_E_ZSTD if compression fails).
std::string encode(std::span<const frame_view> frames, codec c, int zstd_level = 3);

// A checked segment. decode() validates the header and every frame up front, so frames()
// never fails. For a raw segment the views point into the bytes given to decode(), which
// must outlive this object; for zstd they point into a buffer this object owns (moving the
// object keeps them valid).
class decoded_segment {
public:
    static decoded_segment decode(std::span<const std::uint8_t> bytes);
    static decoded_segment decode(std::string_view bytes);
    // A temporary string would leave raw views dangling: keep the bytes in a variable.
    static decoded_segment decode(std::string&&) = delete;

    decoded_segment(decoded_segment&&) noexcept = default;
    decoded_segment& operator=(decoded_segment&&) noexcept = default;
    decoded_segment(const decoded_segment&) = delete;
    decoded_segment& operator=(const decoded_segment&) = delete;

    std::uint8_t codec() const noexcept { return codec_; }  // QSEG_CODEC_RAW or _ZSTD
    std::uint32_t frame_count() const noexcept { return frame_count_; }
    std::uint32_t raw_length() const noexcept { return raw_length_; }
    // The uncompressed frame area (into the input for raw, into the owned buffer for zstd).
    std::span<const std::uint8_t> frame_area() const noexcept { return area_; }
    // frame_count() frames in offset order.
    const std::vector<frame_view>& frames() const noexcept { return frames_; }

private:
    decoded_segment() = default;

    std::uint8_t codec_ = 0;
    std::uint32_t frame_count_ = 0;
    std::uint32_t raw_length_ = 0;
    std::unique_ptr<std::uint8_t[]> owned_;
    std::span<const std::uint8_t> area_;
    std::vector<frame_view> frames_;
};

// "raw" / "zstd" (or "unknown").
std::string_view codec_name(std::uint8_t c) noexcept;

// Lower-case canonical form, 8-4-4-4-12.
std::string uuid_to_string(const std::array<std::uint8_t, 16>& uuid);
// Accepts exactly the canonical 36-character form (hex digits in either case, dashes at
// 8, 13, 18, 23); anything else gives nullopt.
std::optional<std::array<std::uint8_t, 16>> parse_uuid(std::string_view text);

}  // namespace queen::segment
