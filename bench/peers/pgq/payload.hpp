#pragma once
// The event payload, the same JSON shape as queen_bench's:
//   {"producer":3,"seq":12345,"sentUs":1700000000000000,"pad":"xxx…"}
// padded with 'x' to exactly payload_bytes (never shorter than the unpadded object).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pgq_bench {

// Wall-clock microseconds since the epoch: comparable between processes on one machine.
std::int64_t wall_us();

// Appends the payload of (producer, seq) to `out`; its size is max(payload_bytes, unpadded size).
void append_payload(std::string& out, std::uint32_t producer, std::uint64_t seq, std::int64_t sent_us,
                    std::size_t payload_bytes);

// Replaces `out` with a PostgreSQL text[] literal {"…","…"} of the payloads of seqs
// [first, first + n) of `producer` (quotes and backslashes escaped).
void build_payload_array(std::string& out, std::uint32_t producer, std::uint64_t first, std::uint64_t n,
                         std::size_t payload_bytes);

struct payload_ids {
    std::uint32_t producer = 0;
    std::uint64_t seq = 0;
};

// Producer and seq of a payload made by append_payload; nullopt for anything else.
std::optional<payload_ids> parse_payload(std::string_view p);

}  // namespace pgq_bench
