// Frames of a stored segment found by offset (broker/segment/segment_reader.hpp): what pop,
// the message browser, dead letters and the ack-offset lookup rely on.
#include "segment/segment_reader.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace queen::segment {
namespace {

// A segment of `n` frames whose transaction ids are "tx<offset>", its first frame at `first`.
std::string segment_of(std::int64_t first, int n, codec c) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) ids.push_back("tx" + std::to_string(first + i));
    std::vector<frame_view> frames;
    for (const auto& id : ids) frames.push_back(frame_view{1'700'000'000'000'000, id, std::nullopt, std::nullopt, "{}"});
    return encode(frames, c);
}

// (offset, transaction id) of every frame the span visit yields.
std::vector<std::pair<std::int64_t, std::string>> visited(const segment_reader& r, std::int64_t after,
                                                          std::int64_t through, std::vector<std::int64_t> skip = {}) {
    std::vector<std::pair<std::int64_t, std::string>> out;
    r.for_each_in_span(after, through, skip,
                       [&](std::int64_t offset, const frame_view& f) { out.emplace_back(offset, std::string(f.transaction_id)); });
    return out;
}

TEST(SegmentReader, LocatesEachFrameByItsOffsetAndNothingOutside) {
    for (codec c : {codec::raw, codec::zstd}) {
        const std::string body = segment_of(100, 5, c);
        const segment_reader r(body, 100);
        EXPECT_EQ(r.frame_count(), 5u);
        for (std::int64_t off = 100; off < 105; ++off) {
            ASSERT_NE(r.at(off), nullptr) << off;
            EXPECT_EQ(r.at(off)->transaction_id, "tx" + std::to_string(off));
        }
        EXPECT_EQ(r.at(99), nullptr);
        EXPECT_EQ(r.at(105), nullptr);
        EXPECT_EQ(r.at(-1), nullptr);
    }
}

TEST(SegmentReader, SpanIsExclusiveBelowInclusiveAboveAndSkipsTombstones) {
    const std::string body = segment_of(10, 6, codec::raw);  // offsets 10..15
    const segment_reader r(body, 10);
    using v = std::vector<std::pair<std::int64_t, std::string>>;
    EXPECT_EQ(visited(r, 11, 13), (v{{12, "tx12"}, {13, "tx13"}}));
    EXPECT_EQ(visited(r, 0, 100), (v{{10, "tx10"}, {11, "tx11"}, {12, "tx12"}, {13, "tx13"}, {14, "tx14"}, {15, "tx15"}}));
    EXPECT_EQ(visited(r, 9, 15, {10, 13, 15}), (v{{11, "tx11"}, {12, "tx12"}, {14, "tx14"}}));
    EXPECT_TRUE(visited(r, 15, 20).empty());
    EXPECT_TRUE(visited(r, 0, 9).empty());
}

TEST(SegmentReader, RefusesACorruptSegment) {
    std::string body = segment_of(1, 3, codec::raw);
    body.resize(body.size() - 1);
    EXPECT_THROW(segment_reader(body, 1), segment_error);
}

}  // namespace
}  // namespace queen::segment
