#include "segment/segment_codec.hpp"

#include "util/hex_digit.hpp"

#include <cstring>
#include <limits>

#include "queen_segment_zstd.h"

namespace queen::segment {
namespace {

struct cctx_deleter {
    void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};
struct dctx_deleter {
    void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
};

// One context of each kind per thread, created on first use.
ZSTD_CCtx* thread_cctx() {
    thread_local std::unique_ptr<ZSTD_CCtx, cctx_deleter> ctx{ZSTD_createCCtx()};
    if (!ctx) throw segment_error(QSEG_E_ZSTD, "cannot create a zstd compression context");
    return ctx.get();
}

ZSTD_DCtx* thread_dctx() {
    thread_local std::unique_ptr<ZSTD_DCtx, dctx_deleter> ctx{ZSTD_createDCtx()};
    if (!ctx) throw segment_error(QSEG_E_ZSTD, "cannot create a zstd decompression context");
    return ctx.get();
}

std::string make_message(qseg_status status, const std::string& context) {
    std::string msg = "segment: ";
    msg += qseg_status_text(status);
    if (!context.empty()) {
        msg += " (";
        msg += context;
        msg += ')';
    }
    return msg;
}

qseg_frame to_c(const frame_view& f, std::size_t index) {
    auto fail = [index](qseg_status st, const char* what) {
        throw segment_error(st, "frame " + std::to_string(index) + ": " + what);
    };
    if (f.transaction_id.empty()) fail(QSEG_E_FRAME, "empty transaction id");
    if (f.transaction_id.size() > QSEG_MAX_TXID) fail(QSEG_E_FIELD_TOO_LONG, "transaction id");
    if (f.producer_sub && f.producer_sub->size() > QSEG_MAX_PRODUCER) fail(QSEG_E_FIELD_TOO_LONG, "producer");
    if (f.payload.size() > std::numeric_limits<std::uint32_t>::max()) fail(QSEG_E_FIELD_TOO_LONG, "payload");

    qseg_frame c{};
    c.created_at_us = f.created_at_us;
    c.txid = f.transaction_id.data();
    c.txid_len = static_cast<std::uint16_t>(f.transaction_id.size());
    c.trace_id = f.trace_id ? f.trace_id->data() : nullptr;
    if (f.producer_sub) {
        // A present but empty producer must still be a non-null pointer.
        c.producer = f.producer_sub->data() ? f.producer_sub->data() : "";
        c.producer_len = static_cast<std::uint16_t>(f.producer_sub->size());
    }
    c.payload = f.payload.data() ? f.payload.data() : "";
    c.payload_len = static_cast<std::uint32_t>(f.payload.size());
    return c;
}

frame_view from_c(const qseg_frame& c) {
    frame_view f;
    f.created_at_us = c.created_at_us;
    f.transaction_id = std::string_view(c.txid, c.txid_len);
    if (c.trace_id) {
        std::array<std::uint8_t, 16> t{};
        std::memcpy(t.data(), c.trace_id, t.size());
        f.trace_id = t;
    }
    if (c.producer) f.producer_sub = std::string_view(c.producer, c.producer_len);
    f.payload = std::string_view(c.payload, c.payload_len);
    return f;
}

void check(qseg_status st, const char* context) {
    if (st != QSEG_OK) throw segment_error(st, context);
}

// Smallest possible frame: length prefix, created_at, txid_length, 1-byte txid,
// trace_flag, producer_length, payload_length.
constexpr std::uint64_t min_frame_size = 4 + 8 + 2 + 1 + 1 + 2 + 4;

}  // namespace

segment_error::segment_error(qseg_status status) : std::runtime_error(make_message(status, {})), status_(status) {}

segment_error::segment_error(qseg_status status, const std::string& context)
    : std::runtime_error(make_message(status, context)), status_(status) {}

std::string encode(std::span<const frame_view> frames, codec c, int zstd_level) {
    if (c != codec::raw && c != codec::zstd) throw segment_error(QSEG_E_CODEC, "encode");
    if (frames.empty()) throw segment_error(QSEG_E_COUNT, "no frames");
    if (frames.size() > std::numeric_limits<std::uint32_t>::max()) throw segment_error(QSEG_E_COUNT, "too many frames");

    std::vector<qseg_frame> cframes;
    cframes.reserve(frames.size());
    std::uint64_t raw_len = 0;
    for (std::size_t i = 0; i < frames.size(); ++i) {
        cframes.push_back(to_c(frames[i], i));
        std::size_t size = qseg_frame_size(&cframes.back());
        if (size == 0) throw segment_error(QSEG_E_FIELD_TOO_LONG, "frame " + std::to_string(i));
        raw_len += size;
    }
    if (raw_len > std::numeric_limits<std::uint32_t>::max())
        throw segment_error(QSEG_E_LENGTH, "frame area reaches 4 GiB");

    const auto count = static_cast<std::uint32_t>(frames.size());
    const auto raw_length = static_cast<std::uint32_t>(raw_len);
    auto write_frames = [&](std::uint8_t* out, std::size_t cap) {
        std::size_t pos = 0;
        for (const auto& f : cframes) {
            std::size_t written = 0;
            check(qseg_write_frame(out + pos, cap - pos, &f, &written), "write frame");
            pos += written;
        }
    };

    std::string out;
    if (c == codec::raw) {
        out.resize(QSEG_HEADER_SIZE + static_cast<std::size_t>(raw_len));
        auto* p = reinterpret_cast<std::uint8_t*>(out.data());
        check(qseg_write_header(p, out.size(), QSEG_CODEC_RAW, count, raw_length), "header");
        write_frames(p + QSEG_HEADER_SIZE, out.size() - QSEG_HEADER_SIZE);
        return out;
    }

    std::unique_ptr<std::uint8_t[]> area(new std::uint8_t[raw_len]);
    write_frames(area.get(), raw_len);
    const std::size_t bound = qseg_zstd_bound(raw_len);
    if (ZSTD_isError(bound)) throw segment_error(QSEG_E_ZSTD, "compress bound");
    out.resize(QSEG_HEADER_SIZE + bound);
    auto* p = reinterpret_cast<std::uint8_t*>(out.data());
    check(qseg_write_header(p, out.size(), QSEG_CODEC_ZSTD, count, raw_length), "header");
    std::size_t written = 0;
    check(qseg_zstd_compress(thread_cctx(), zstd_level, area.get(), raw_len, p + QSEG_HEADER_SIZE, bound, &written),
          "compress");
    out.resize(QSEG_HEADER_SIZE + written);
    return out;
}

decoded_segment decoded_segment::decode(std::string_view bytes) {
    return decode(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

decoded_segment decoded_segment::decode(std::span<const std::uint8_t> bytes) {
    qseg_header h{};
    check(qseg_parse_header(bytes.data(), bytes.size(), &h), "header");

    // Every frame takes at least min_frame_size bytes: reject impossible headers before
    // allocating anything for them.
    if (static_cast<std::uint64_t>(h.frame_count) * min_frame_size > h.raw_length)
        throw segment_error(QSEG_E_COUNT, "frame_count does not fit raw_length");

    decoded_segment seg;
    seg.codec_ = h.codec;
    seg.frame_count_ = h.frame_count;
    seg.raw_length_ = h.raw_length;

    if (h.codec == QSEG_CODEC_RAW) {
        seg.area_ = std::span<const std::uint8_t>(h.body, h.body_len);
    } else {
        // Do not trust raw_length for the allocation unless the zstd frame agrees.
        check(qseg_zstd_check(&h), "zstd frame");
        seg.owned_.reset(new std::uint8_t[h.raw_length]);
        check(qseg_zstd_decompress(thread_dctx(), &h, seg.owned_.get(), h.raw_length), "decompress");
        seg.area_ = std::span<const std::uint8_t>(seg.owned_.get(), h.raw_length);
    }

    seg.frames_.reserve(h.frame_count);
    qseg_iter it;
    qseg_iter_init(&it, seg.area_.data(), seg.area_.size(), h.frame_count);
    for (;;) {
        qseg_frame f{};
        const qseg_status st = qseg_iter_next(&it, &f);
        if (st == QSEG_END) break;
        if (st != QSEG_OK) {
            throw segment_error(st, "frame " + std::to_string(seg.frames_.size()));
        }
        seg.frames_.push_back(from_c(f));
    }
    return seg;
}

std::string_view codec_name(std::uint8_t c) noexcept {
    switch (c) {
        case QSEG_CODEC_RAW:
            return "raw";
        case QSEG_CODEC_ZSTD:
            return "zstd";
        default:
            return "unknown";
    }
}

std::string uuid_to_string(const std::array<std::uint8_t, 16>& uuid) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    s.reserve(36);
    for (std::size_t i = 0; i < uuid.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
        s.push_back(digits[uuid[i] >> 4]);
        s.push_back(digits[uuid[i] & 0x0f]);
    }
    return s;
}

std::optional<std::array<std::uint8_t, 16>> parse_uuid(std::string_view text) {
    if (text.size() != 36) return std::nullopt;
    std::array<std::uint8_t, 16> out{};
    std::size_t byte = 0;
    for (std::size_t i = 0; i < text.size();) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (text[i] != '-') return std::nullopt;
            ++i;
            continue;
        }
        const int hi = util::hex_digit_value(text[i]);
        const int lo = util::hex_digit_value(text[i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out[byte++] = static_cast<std::uint8_t>((hi << 4) | lo);
        i += 2;
    }
    return out;
}

}  // namespace queen::segment
