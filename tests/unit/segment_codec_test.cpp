// Round trips through queen::segment (broker/segment/segment_codec.hpp) and the C codec.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "queen_segment.h"
#include "queen_segment_zstd.h"
#include "segment/segment_codec.hpp"

namespace {

using queen::segment::codec;
using queen::segment::decoded_segment;
using queen::segment::encode;
using queen::segment::frame_view;
using queen::segment::parse_uuid;
using queen::segment::segment_error;
using queen::segment::uuid_to_string;

std::array<std::uint8_t, 16> trace_of(std::uint32_t n) {
    std::array<std::uint8_t, 16> t{};
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<std::uint8_t>(n * 31 + i);
    return t;
}

// Owns the strings that frame_views point at.
struct frame_set {
    std::vector<std::string> texts;
    std::vector<frame_view> frames;

    explicit frame_set(std::size_t reserve) { texts.reserve(reserve * 3); }
    std::string_view keep(std::string s) {
        texts.push_back(std::move(s));
        return texts.back();
    }
};

void expect_same(const std::vector<frame_view>& got, const std::vector<frame_view>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        SCOPED_TRACE("frame " + std::to_string(i));
        EXPECT_EQ(got[i].created_at_us, want[i].created_at_us);
        EXPECT_EQ(got[i].transaction_id, want[i].transaction_id);
        EXPECT_EQ(got[i].trace_id, want[i].trace_id);
        ASSERT_EQ(got[i].producer_sub.has_value(), want[i].producer_sub.has_value());
        if (want[i].producer_sub) {
            EXPECT_EQ(*got[i].producer_sub, *want[i].producer_sub);
        }
        EXPECT_EQ(got[i].payload, want[i].payload);
    }
}

qseg_status encode_status(const std::vector<frame_view>& frames, codec c = codec::raw) {
    try {
        encode(frames, c);
        return QSEG_OK;
    } catch (const segment_error& e) {
        return e.status();
    }
}

class SegmentRoundTrip : public ::testing::TestWithParam<codec> {};

TEST_P(SegmentRoundTrip, EdgeCaseFrames) {
    frame_set s(8);
    const std::string txid255(255, 'x');
    const std::string producer1024(1024, 'p');
    frame_view f;

    f = {};  // empty payload, no trace, no producer
    f.created_at_us = 0;
    f.transaction_id = "a";
    s.frames.push_back(f);

    f = {};  // empty producer string is not "no producer"
    f.created_at_us = std::numeric_limits<std::int64_t>::min();
    f.transaction_id = s.keep(txid255);
    f.producer_sub = std::string_view("");
    f.payload = "{}";
    s.frames.push_back(f);

    f = {};
    f.created_at_us = std::numeric_limits<std::int64_t>::max();
    f.transaction_id = "tx";
    f.trace_id = trace_of(7);
    f.producer_sub = s.keep(producer1024);
    f.payload = s.keep("{\"emoji\":\"\xf0\x9f\x91\x91\",\"nul\":\"\\u0000\"}");
    s.frames.push_back(f);

    f = {};  // binary bytes in payload survive untouched, including NUL
    f.created_at_us = -1700000000000000;
    f.transaction_id = "bin";
    f.payload = s.keep(std::string("\0\xff\x01", 3));
    s.frames.push_back(f);

    const std::string bytes = encode(s.frames, GetParam());
    ASSERT_GE(bytes.size(), 16u);
    EXPECT_EQ(bytes.substr(0, 4), "QSEG");
    EXPECT_EQ(static_cast<std::uint8_t>(bytes[5]), static_cast<std::uint8_t>(GetParam()));

    const auto seg = decoded_segment::decode(bytes);
    EXPECT_EQ(seg.codec(), static_cast<std::uint8_t>(GetParam()));
    EXPECT_EQ(seg.frame_count(), 4u);
    expect_same(seg.frames(), s.frames);
    EXPECT_EQ(seg.frames()[1].transaction_id.size(), 255u);
    EXPECT_EQ(seg.frames()[2].producer_sub->size(), 1024u);
    EXPECT_EQ(seg.frames()[3].payload.size(), 3u);
    // raw_length = sum of frame sizes: (21+1) + (21+255+0+2) + (21+2+16+1024+len) + (21+3+3)
    const std::size_t payload2 = s.frames[2].payload.size();
    EXPECT_EQ(seg.raw_length(), 22u + 278u + (21u + 2u + 16u + 1024u + payload2) + 27u);
}

TEST_P(SegmentRoundTrip, ManyFrames) {
    constexpr std::uint32_t n = 10000;
    frame_set s(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        frame_view f;
        f.created_at_us = 1700000000000000 + i;
        f.transaction_id = s.keep("txn-" + std::to_string(i));
        if (i % 3 == 0) f.trace_id = trace_of(i);
        if (i % 5 == 0) f.producer_sub = s.keep("producer-" + std::to_string(i % 7));
        if (i % 11 == 0) f.producer_sub = std::string_view("");
        f.payload = s.keep("{\"i\":" + std::to_string(i) + "}");
        s.frames.push_back(f);
    }
    const std::string bytes = encode(s.frames, GetParam());
    const auto seg = decoded_segment::decode(bytes);
    EXPECT_EQ(seg.frame_count(), n);
    expect_same(seg.frames(), s.frames);
    if (GetParam() == codec::zstd) {
        EXPECT_LT(bytes.size(), 16 + seg.raw_length() / 2);
    } else {
        EXPECT_EQ(bytes.size(), 16 + seg.raw_length());
    }
}

TEST_P(SegmentRoundTrip, LargePayload) {
    std::string big(8u << 20, '\0');
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + (i * 7) % 26);
    frame_view f;
    f.created_at_us = 42;
    f.transaction_id = "big";
    f.payload = big;
    const std::string bytes = encode(std::span<const frame_view>(&f, 1), GetParam());
    const auto seg = decoded_segment::decode(bytes);
    ASSERT_EQ(seg.frames().size(), 1u);
    EXPECT_EQ(seg.frames()[0].payload.size(), big.size());
    EXPECT_TRUE(seg.frames()[0].payload == big);
    EXPECT_EQ(seg.raw_length(), 21u + 3u + big.size());
}

INSTANTIATE_TEST_SUITE_P(Codecs, SegmentRoundTrip, ::testing::Values(codec::raw, codec::zstd),
                         [](const auto& info) {
                             return std::string(info.param == codec::raw ? "raw" : "zstd");
                         });

TEST(SegmentCodec, ZstdViewsSurviveMoveAndInputLoss) {
    frame_view f;
    f.created_at_us = 5;
    f.transaction_id = "tx";
    f.producer_sub = std::string_view("prod");
    f.payload = "{\"x\":\"hello hello hello hello\"}";
    auto bytes = std::make_unique<std::string>(encode(std::span<const frame_view>(&f, 1),
                                                      codec::zstd));
    auto seg = decoded_segment::decode(*bytes);
    bytes.reset();  // zstd views do not point into the input
    decoded_segment moved = std::move(seg);
    ASSERT_EQ(moved.frames().size(), 1u);
    EXPECT_EQ(moved.frames()[0].payload, "{\"x\":\"hello hello hello hello\"}");
    EXPECT_EQ(*moved.frames()[0].producer_sub, "prod");
    EXPECT_EQ(moved.codec(), QSEG_CODEC_ZSTD);
    const auto area = moved.frame_area();
    EXPECT_GE(moved.frames()[0].payload.data(), reinterpret_cast<const char*>(area.data()));
}

TEST(SegmentCodec, ZstdIsDeterministicAcrossThreads) {
    frame_view f;
    f.created_at_us = 1;
    f.transaction_id = "tx";
    f.payload = "{\"a\":[1,2,3,1,2,3,1,2,3]}";
    const std::string here = encode(std::span<const frame_view>(&f, 1), codec::zstd, 3);
    std::string there;
    std::thread t([&] {
        try {
            there = encode(std::span<const frame_view>(&f, 1), codec::zstd, 3);
        } catch (const segment_error&) {
            there = "exception";
        }
    });
    t.join();
    EXPECT_EQ(here, there);
    EXPECT_EQ(decoded_segment::decode(here).frames()[0].payload, f.payload);
    // Other levels still produce a valid segment.
    for (int level : {-5, 1, 19}) {
        const std::string bytes = encode(std::span<const frame_view>(&f, 1), codec::zstd, level);
        const auto seg = decoded_segment::decode(bytes);
        EXPECT_EQ(seg.frames()[0].payload, f.payload) << level;
    }
}

TEST(SegmentCodec, EncodeRejectsBadInput) {
    EXPECT_EQ(encode_status({}), QSEG_E_COUNT);

    frame_view f;
    f.transaction_id = "";
    EXPECT_EQ(encode_status({f}), QSEG_E_FRAME);
    const std::string t256(256, 't');
    f.transaction_id = t256;
    EXPECT_EQ(encode_status({f}), QSEG_E_FIELD_TOO_LONG);
    EXPECT_EQ(encode_status({f}, codec::zstd), QSEG_E_FIELD_TOO_LONG);

    f.transaction_id = "ok";
    const std::string p1025(1025, 'p');
    f.producer_sub = std::string_view(p1025);
    EXPECT_EQ(encode_status({f}), QSEG_E_FIELD_TOO_LONG);
    f.producer_sub.reset();
    EXPECT_EQ(encode_status({f}), QSEG_OK);
    EXPECT_EQ(encode_status({f}, static_cast<codec>(2)), QSEG_E_CODEC);

    try {
        f.transaction_id = "";
        encode(std::vector<frame_view>{f}, codec::raw);
        FAIL() << "no exception";
    } catch (const segment_error& e) {
        EXPECT_EQ(e.status(), QSEG_E_FRAME);
        EXPECT_NE(std::string(e.what()).find("corrupt frame"), std::string::npos) << e.what();
        const std::runtime_error& base = e;  // is a runtime_error
        EXPECT_STREQ(base.what(), e.what());
    }
}

TEST(SegmentCodec, DecodeErrorCarriesStatus) {
    try {
        decoded_segment::decode(std::string_view("QSEG"));
        FAIL() << "no exception";
    } catch (const segment_error& e) {
        EXPECT_EQ(e.status(), QSEG_E_TRUNCATED);
        EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos);
    }
    EXPECT_THROW(decoded_segment::decode(std::span<const std::uint8_t>()), segment_error);
}

TEST(SegmentUuid, FormatAndParse) {
    const std::array<std::uint8_t, 16> u{0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3,
                                         0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00};
    EXPECT_EQ(uuid_to_string(u), "123e4567-e89b-12d3-a456-426614174000");
    EXPECT_EQ(parse_uuid("123e4567-e89b-12d3-a456-426614174000"), u);
    EXPECT_EQ(parse_uuid("123E4567-E89B-12D3-A456-426614174000"), u);
    EXPECT_EQ(uuid_to_string(std::array<std::uint8_t, 16>{}),
              "00000000-0000-0000-0000-000000000000");
    std::array<std::uint8_t, 16> ff;
    ff.fill(0xff);
    EXPECT_EQ(uuid_to_string(ff), "ffffffff-ffff-ffff-ffff-ffffffffffff");
    EXPECT_EQ(parse_uuid("FFFFFFFF-ffff-FFFF-ffff-FFFFFFFFFFFF"), ff);

    for (std::string_view bad : {
             "",
             "123e4567e89b12d3a456426614174000",          // no dashes
             "{123e4567-e89b-12d3-a456-426614174000}",    // braces
             "123e4567-e89b-12d3-a456-42661417400",       // short
             "123e4567-e89b-12d3-a456-4266141740000",     // long
             "123e4567-e89b-12d3-a456_426614174000",      // wrong separator
             "123e4567-e89b12-d3-a456-426614174000",      // dash moved
             "123e4567-e89b-12d3-a456-42661417400g",      // not hex
             " 23e4567-e89b-12d3-a456-426614174000",      // space
             "123e4567-e89b-12d3-a456-4266141740-0",      // extra dash
         }) {
        EXPECT_FALSE(parse_uuid(bad).has_value()) << bad;
    }
    for (std::uint32_t i = 0; i < 50; ++i) {
        const auto t = trace_of(i);
        EXPECT_EQ(parse_uuid(uuid_to_string(t)), t);
    }
}

// ---- the C API directly -----------------------------------------------------------------

TEST(SegmentC, FrameSizeAndWrite) {
    const std::uint8_t trace[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    qseg_frame f{};
    f.created_at_us = 0x0102030405060708;
    f.txid = "abc";
    f.txid_len = 3;
    f.payload = "{}";
    f.payload_len = 2;
    EXPECT_EQ(qseg_frame_size(&f), 4u + 17u + 3u + 2u);
    f.trace_id = trace;
    EXPECT_EQ(qseg_frame_size(&f), 4u + 17u + 3u + 16u + 2u);
    f.producer = "pp";
    f.producer_len = 2;
    EXPECT_EQ(qseg_frame_size(&f), 4u + 17u + 3u + 16u + 2u + 2u);

    std::uint8_t buf[64];
    std::size_t written = 99;
    EXPECT_EQ(qseg_write_frame(buf, 43, &f, &written), QSEG_E_CAPACITY);
    EXPECT_EQ(written, 99u);
    ASSERT_EQ(qseg_write_frame(buf, sizeof buf, &f, &written), QSEG_OK);
    EXPECT_EQ(written, 44u);
    const std::uint8_t expected[44] = {0, 0, 0, 40, 1, 2, 3, 4, 5, 6, 7, 8, 0, 3, 'a', 'b', 'c',
                                       1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                       0, 2, 'p', 'p', 0, 0, 0, 2, '{', '}'};
    EXPECT_EQ(std::memcmp(buf, expected, sizeof expected), 0);

    qseg_frame bad = f;
    bad.txid_len = 0;
    EXPECT_EQ(qseg_frame_size(&bad), 0u);
    EXPECT_EQ(qseg_write_frame(buf, sizeof buf, &bad, &written), QSEG_E_FRAME);
    bad.txid_len = 256;
    EXPECT_EQ(qseg_frame_size(&bad), 0u);
    EXPECT_EQ(qseg_write_frame(buf, sizeof buf, &bad, &written), QSEG_E_FIELD_TOO_LONG);
    bad = f;
    bad.producer_len = 1025;
    EXPECT_EQ(qseg_write_frame(buf, sizeof buf, &bad, &written), QSEG_E_FIELD_TOO_LONG);
    bad.producer = nullptr;  // producer_len ignored without a producer
    EXPECT_EQ(qseg_frame_size(&bad), 4u + 17u + 3u + 16u + 2u);
    bad = f;
    bad.payload_len = 0xffffffffu;  // frame_length would not fit 32 bits
    EXPECT_EQ(qseg_frame_size(&bad), 0u);
}

TEST(SegmentC, Header) {
    std::uint8_t h[16];
    EXPECT_EQ(qseg_write_header(h, 15, QSEG_CODEC_RAW, 1, 22), QSEG_E_CAPACITY);
    EXPECT_EQ(qseg_write_header(h, 16, 2, 1, 22), QSEG_E_CODEC);
    EXPECT_EQ(qseg_write_header(h, 16, QSEG_CODEC_RAW, 0, 22), QSEG_E_COUNT);
    ASSERT_EQ(qseg_write_header(h, 16, QSEG_CODEC_ZSTD, 0x01020304, 0x0a0b0c0d), QSEG_OK);
    const std::uint8_t expected[16] = {'Q', 'S', 'E', 'G', 1, 1, 0, 0,
                                       1, 2, 3, 4, 10, 11, 12, 13};
    EXPECT_EQ(std::memcmp(h, expected, 16), 0);
    qseg_header out{};
    EXPECT_EQ(qseg_parse_header(h, 16, &out), QSEG_E_TRUNCATED);  // zstd needs a body
    EXPECT_EQ(qseg_parse_header(h, 15, &out), QSEG_E_TRUNCATED);
    EXPECT_EQ(qseg_parse_header(nullptr, 0, &out), QSEG_E_TRUNCATED);
}

TEST(SegmentC, IteratorErrorsAreStable) {
    // One frame: frame_length 17 is too short for txid "a" (needs 18).
    const std::uint8_t area[] = {0, 0, 0, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'a', 0, 0xff, 0xff,
                                 0, 0, 0};
    qseg_iter it;
    qseg_iter_init(&it, area, sizeof area, 1);
    qseg_frame f{};
    EXPECT_EQ(qseg_iter_next(&it, &f), QSEG_E_FRAME);
    EXPECT_EQ(qseg_iter_next(&it, &f), QSEG_E_FRAME);
    EXPECT_EQ(it.remaining, 1u);

    qseg_iter_init(&it, nullptr, 0, 1);
    EXPECT_EQ(qseg_iter_next(&it, &f), QSEG_E_COUNT);
    qseg_iter_init(&it, area, 3, 1);
    EXPECT_EQ(qseg_iter_next(&it, &f), QSEG_E_TRUNCATED);
    qseg_iter_init(&it, area, sizeof area, 0);
    EXPECT_EQ(qseg_iter_next(&it, &f), QSEG_E_COUNT);
    qseg_iter_init(&it, nullptr, 0, 0);
    EXPECT_EQ(qseg_iter_next(&it, &f), QSEG_END);
}

TEST(SegmentC, StatusText) {
    EXPECT_STREQ(qseg_status_text(QSEG_OK), "ok");
    EXPECT_STREQ(qseg_status_text(QSEG_E_TRUNCATED), "truncated");
    EXPECT_STREQ(qseg_status_text(QSEG_E_MAGIC), "bad magic");
    EXPECT_STREQ(qseg_status_text(QSEG_E_LENGTH), "raw length mismatch");
    EXPECT_STREQ(qseg_status_text(QSEG_E_FIELD_TOO_LONG), "field too long");
    EXPECT_STREQ(qseg_status_text(static_cast<qseg_status>(99)), "unknown status");
    EXPECT_EQ(queen::segment::codec_name(QSEG_CODEC_RAW), "raw");
    EXPECT_EQ(queen::segment::codec_name(QSEG_CODEC_ZSTD), "zstd");
}

TEST(SegmentC, ZstdCompressCapacity) {
    const std::uint8_t area[64] = {};
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    std::uint8_t out[256];
    std::size_t written = 0;
    EXPECT_EQ(qseg_zstd_compress(cctx, 3, area, sizeof area, out, 2, &written), QSEG_E_CAPACITY);
    ASSERT_EQ(qseg_zstd_compress(cctx, 3, area, sizeof area, out,
                                 qseg_zstd_bound(sizeof area), &written),
              QSEG_OK);
    EXPECT_GT(written, 0u);
    EXPECT_LT(written, sizeof area);
    EXPECT_EQ(ZSTD_getFrameContentSize(out, written), sizeof area);
    EXPECT_EQ(qseg_zstd_compress(nullptr, 3, area, sizeof area, out, sizeof out, &written),
              QSEG_E_ZSTD);
    ZSTD_freeCCtx(cctx);
}

}  // namespace

// Found by segment_decode_fuzz: a zstd segment whose header claims ~4 GiB must be refused
// before anything is allocated for it.
TEST(SegmentZstd, ImplausibleRawLengthIsRefusedBeforeAllocating) {
    const unsigned char bytes[] = {0x51, 0x53, 0x45, 0x47, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xff, 0xff,
                                   0xff, 0x0c, 0x28, 0xb5, 0x2f, 0xfd, 0x01, 0x00, 0x28, 0x03, 0x00, 0x00, 0x00, 0x1e,
                                   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, 0x0a, 0x24, 0x18, 0x1e,
                                   0x75, 0x62, 0xd2, 0x00, 0x00, 0x07, 0x7b, 0x22, 0x22, 0x3a, 0x22, 0xc3, 0xa9, 0x22,
                                   0x7d};
    try {
        (void)queen::segment::decoded_segment::decode(std::span<const std::uint8_t>(bytes, sizeof bytes));
        FAIL() << "decoded an impossible segment";
    } catch (const queen::segment::segment_error& e) {
        EXPECT_TRUE(e.status() == QSEG_E_LENGTH || e.status() == QSEG_E_ZSTD) << e.what();
    }
}
