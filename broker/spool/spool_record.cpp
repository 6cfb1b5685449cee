#include "spool/spool_record.hpp"

#include "util/big_endian.hpp"

#include <array>
#include <stdexcept>

namespace queen::spool {
namespace {

constexpr std::uint8_t format_version = 1;
constexpr std::uint8_t flag_in_doubt = 1;
constexpr std::uint8_t flag_more_follow = 2;
constexpr std::uint8_t flag_trace = 4;
constexpr std::uint8_t flag_producer = 8;

std::array<std::uint32_t, 256> make_table() {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        t[i] = c;
    }
    return t;
}

void put_u8(std::string& out, std::uint8_t v) {
    out.push_back(static_cast<char>(v));
}
void put_u16(std::string& out, std::uint16_t v) {
    util::append_be(out, v, 2);
}
void put_u32(std::string& out, std::uint32_t v) {
    util::append_be(out, v, 4);
}
void put_u64(std::string& out, std::uint64_t v) {
    util::append_be(out, v, 8);
}
void put_str16(std::string& out, std::string_view s, const char* what) {
    if (s.size() > 0xFFFF) throw std::length_error(std::string("spool record: ") + what + " is over 65535 bytes");
    put_u16(out, static_cast<std::uint16_t>(s.size()));
    out.append(s);
}

// Bounds-checked reader over a record body.
struct reader {
    std::string_view data;
    std::size_t pos = 0;
    bool ok = true;

    bool need(std::size_t n) {
        if (!ok || data.size() - pos < n) ok = false;
        return ok;
    }
    std::uint64_t uint(int bytes) {
        if (!need(static_cast<std::size_t>(bytes))) return 0;
        const std::uint64_t v = util::load_be(data.data() + pos, static_cast<std::size_t>(bytes));
        pos += static_cast<std::size_t>(bytes);
        return v;
    }
    std::string str(std::size_t n) {
        if (!need(n)) return {};
        std::string s(data.substr(pos, n));
        pos += n;
        return s;
    }
};

std::uint32_t load_u32(std::string_view d, std::size_t pos) {
    return util::load_be32(d.data() + pos);
}

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc) {
    static const auto table = make_table();
    const auto* p = static_cast<const std::uint8_t*>(data);
    crc = ~crc;
    for (std::size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}

void encode(const record& r, std::string& out) {
    if (r.item.payload.size() > max_record_body - 1024) throw std::length_error("spool record: payload is too large");
    std::string body;
    body.reserve(32 + r.item.queue.size() + r.item.partition.size() + r.item.transaction_id.size() +
                 r.item.payload.size());
    std::uint8_t flags = 0;
    if (r.in_doubt) flags |= flag_in_doubt;
    if (r.more_follow) flags |= flag_more_follow;
    if (r.item.trace_id) flags |= flag_trace;
    if (r.item.producer_sub) flags |= flag_producer;
    put_u8(body, format_version);
    put_u8(body, flags);
    put_u64(body, static_cast<std::uint64_t>(r.accepted_at_us));
    put_str16(body, r.item.queue, "queue");
    put_str16(body, r.item.partition, "partition");
    put_str16(body, r.item.transaction_id, "transaction id");
    if (r.item.trace_id) {
        if (r.item.trace_id->size() > 0xFF) throw std::length_error("spool record: trace id is over 255 bytes");
        put_u8(body, static_cast<std::uint8_t>(r.item.trace_id->size()));
        body.append(*r.item.trace_id);
    }
    if (r.item.producer_sub) put_str16(body, *r.item.producer_sub, "producer");
    put_u32(body, static_cast<std::uint32_t>(r.item.payload.size()));
    body.append(r.item.payload);

    put_u32(out, static_cast<std::uint32_t>(body.size()));
    put_u32(out, crc32c(body.data(), body.size()));
    out.append(body);
}

read_result decode_body(std::string_view body, std::uint32_t checksum, record& out) {
    read_result res;
    res.status = read_status::corrupt;
    if (crc32c(body.data(), body.size()) != checksum) {
        res.why = "checksum mismatch";
        return res;
    }
    reader rd{body};
    auto version = rd.uint(1);
    if (rd.ok && version != format_version) {
        res.why = "unknown record version " + std::to_string(version);
        return res;
    }
    auto flags = static_cast<std::uint8_t>(rd.uint(1));
    if (rd.ok && (flags & ~(flag_in_doubt | flag_more_follow | flag_trace | flag_producer)) != 0) {
        res.why = "unknown record flags";
        return res;
    }
    record r;
    r.in_doubt = (flags & flag_in_doubt) != 0;
    r.more_follow = (flags & flag_more_follow) != 0;
    r.accepted_at_us = static_cast<std::int64_t>(rd.uint(8));
    r.item.queue = rd.str(rd.uint(2));
    r.item.partition = rd.str(rd.uint(2));
    r.item.transaction_id = rd.str(rd.uint(2));
    if (flags & flag_trace) r.item.trace_id = rd.str(rd.uint(1));
    if (flags & flag_producer) r.item.producer_sub = rd.str(rd.uint(2));
    r.item.payload = rd.str(rd.uint(4));
    if (!rd.ok) {
        res.why = "record body is shorter than its fields";
        return res;
    }
    if (rd.pos != body.size()) {
        res.why = "record body has trailing bytes";
        return res;
    }
    out = std::move(r);
    res.status = read_status::ok;
    return res;
}

read_result decode(std::string_view data, std::size_t pos, record& out) {
    read_result res;
    if (pos >= data.size()) {
        res.status = read_status::end;
        res.next = data.size();
        return res;
    }
    const std::size_t left = data.size() - pos;
    if (left < record_header_bytes) {
        res.status = read_status::torn;
        res.next = data.size();
        res.why = "record header is incomplete";
        return res;
    }
    const std::uint32_t length = load_u32(data, pos);
    const std::uint32_t checksum = load_u32(data, pos + 4);
    if (length > max_record_body) {
        // A length this large was never written: the header itself is damaged (or torn).
        res.status = length > left - record_header_bytes ? read_status::torn : read_status::corrupt;
        res.next = data.size();
        res.why = "record length " + std::to_string(length) + " is out of range";
        return res;
    }
    if (length > left - record_header_bytes) {
        res.status = read_status::torn;
        res.next = data.size();
        res.why = "record runs past the end of the file";
        return res;
    }
    res = decode_body(data.substr(pos + record_header_bytes, length), checksum, out);
    res.next = pos + record_header_bytes + length;
    return res;
}

}  // namespace queen::spool
