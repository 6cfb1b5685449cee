#pragma once
// A stored segment read by offset: the one place that knows a segment's frames hold
// consecutive offsets from its first offset (docs/segment-format.md). Pop, the message
// browser, dead letters and the ack-offset lookup find frames only through it.
#include "segment/segment_codec.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>

namespace queen::segment {

class segment_reader {
public:
    // Decodes `body`, whose first frame holds `first_offset`; the bytes must outlive the
    // reader. Throws segment_error when the segment is corrupt.
    segment_reader(std::span<const std::uint8_t> body, std::int64_t first_offset)
        : decoded_(decoded_segment::decode(body)), first_(first_offset) {}
    segment_reader(std::string_view body, std::int64_t first_offset)
        : decoded_(decoded_segment::decode(body)), first_(first_offset) {}

    std::int64_t first_offset() const noexcept { return first_; }
    std::size_t frame_count() const noexcept { return decoded_.frames().size(); }

    // The frame that holds `offset`, or nullptr when the segment does not hold it.
    const frame_view* at(std::int64_t offset) const noexcept {
        if (offset < first_ || static_cast<std::uint64_t>(offset - first_) >= decoded_.frames().size()) return nullptr;
        return &decoded_.frames()[static_cast<std::size_t>(offset - first_)];
    }

    // Calls visit(offset, frame) for each frame with an offset in (after, through] and not in
    // `skip` (ascending: the tombstoned offsets), in offset order.
    template <class Visit>
    void for_each_in_span(std::int64_t after, std::int64_t through, std::span<const std::int64_t> skip,
                          Visit&& visit) const {
        const auto& frames = decoded_.frames();
        std::int64_t offset = first_;
        for (const auto& frame : frames) {
            if (offset > after && offset <= through && !std::binary_search(skip.begin(), skip.end(), offset))
                visit(offset, frame);
            ++offset;
        }
    }

private:
    decoded_segment decoded_;
    std::int64_t first_;
};

}  // namespace queen::segment
