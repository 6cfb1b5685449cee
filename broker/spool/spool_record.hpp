#pragma once
// The spool's record format (docs/maintenance-and-spool.md). A spool file is a 192-byte
// header followed by records, each one pushed item:
//
//   u32 body_length (big-endian) | u32 crc32c(body) (big-endian) | body
//   body: u8 version (1) | u8 flags | i64 accepted_at_us | u16 len + queue
//         | u16 len + partition | u16 len + transaction id | [u8 len + trace id]
//         | [u16 len + producer] | u32 len + payload (JSON text)
//   flags: 1 in doubt, 2 more records of the same push request follow, 4 trace id present,
//          8 producer present
//
// A record is written whole and fsync'd before its push is answered, so after a crash only
// the tail of the file can be incomplete ("torn"); decode() tells a torn record (it runs
// past the end of the data) from a corrupt one (complete, but its checksum or body is wrong).
// Pure functions: no I/O.
#include "domain/push_item.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace queen::spool {

struct record {
    domain::push_item item;
    std::int64_t accepted_at_us = 0;  // broker wall clock when the push arrived
    bool in_doubt = false;            // a direct attempt to store it may have committed
    bool more_follow = false;         // not the last record of its push request

    bool operator==(const record&) const = default;
};

inline constexpr std::size_t record_header_bytes = 8;  // length + checksum
inline constexpr std::uint32_t max_record_body = (1u << 30) + (1u << 20);

// CRC-32C (Castagnoli), software table; `crc` continues an earlier value.
std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc = 0);

// Appends the record (header and body) to `out`. Throws std::length_error when a field is
// longer than the format allows (names over 65535 bytes, payload over max_record_body).
void encode(const record& r, std::string& out);

enum class read_status {
    ok,       // `out` holds the record, `next` is the position after it
    end,      // pos is exactly the end of the data
    torn,     // the record runs past the end of the data (an interrupted append)
    corrupt,  // the record is complete but its checksum or its body is wrong
};

struct read_result {
    read_status status = read_status::end;
    std::size_t next = 0;  // ok: position after the record; torn/corrupt: where the bad record ends
                           // (torn: data.size())
    std::string why;       // torn/corrupt: what is wrong
};

// Decodes the record starting at `pos` of `data`.
read_result decode(std::string_view data, std::size_t pos, record& out);

// Decodes a record body alone (the bytes after the 8-byte header), checking its checksum.
read_result decode_body(std::string_view body, std::uint32_t checksum, record& out);

}  // namespace queen::spool
