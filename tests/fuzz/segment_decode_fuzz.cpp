// libFuzzer harness for the segment decoder: any bytes must decode or raise segment_error,
// and a decoded segment re-encodes to frames with the same content.
#include "segment/segment_codec.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace queen::segment;
    try {
        auto seg = decoded_segment::decode(std::span<const std::uint8_t>(data, size));
        if (seg.frames().size() != seg.frame_count()) __builtin_trap();
        auto again = encode(seg.frames(), codec::raw);
        auto round = decoded_segment::decode(std::string_view(again));
        if (round.frames().size() != seg.frames().size()) __builtin_trap();
        for (std::size_t i = 0; i < seg.frames().size(); ++i) {
            const auto& a = seg.frames()[i];
            const auto& b = round.frames()[i];
            if (a.payload != b.payload || a.transaction_id != b.transaction_id || a.created_at_us != b.created_at_us ||
                a.trace_id != b.trace_id || a.producer_sub != b.producer_sub)
                __builtin_trap();
        }
    } catch (const segment_error&) {
    }
    return 0;
}
