#pragma once
// The spool file's header (docs/maintenance-and-spool.md), 192 bytes, big-endian:
//   identity (64 bytes): magic "QNSPOOL1" | u32 version | u32 header size | database id
//     (40 bytes, NUL-padded) | ... | u32 crc32c of the 60 bytes before it
//   two checkpoint slots (64 bytes each, at 64 and 128): u64 seq | u64 drained | u64 inflight
//     | ... | u32 crc32c of the 60 bytes before it. The valid slot with the higher seq counts;
//     a new checkpoint overwrites the other one, so a torn write never loses both.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace queen::spool {

namespace header_layout {
inline constexpr std::size_t total_bytes = 192;
inline constexpr std::size_t magic_at = 0, magic_bytes = 8;
inline constexpr std::size_t version_at = 8;
inline constexpr std::size_t size_at = 12;
inline constexpr std::size_t database_id_at = 16, database_id_bytes = 40;
inline constexpr std::size_t checked_bytes = 60;  // of the identity and of each slot
inline constexpr std::size_t crc_at = 60;
inline constexpr std::size_t slots_at = 64, slot_bytes = 64;
inline constexpr std::size_t slot_seq_at = 0, slot_drained_at = 8, slot_inflight_at = 16;
}  // namespace header_layout

inline constexpr std::uint32_t spool_file_version = 1;

struct spool_identity {
    std::uint32_t version = 0;
    std::string database_id;  // "" when the file names none
};

struct checkpoint_slot {
    std::uint64_t seq = 0;
    std::uint64_t drained = 0;   // file offset up to which records are in PostgreSQL
    std::uint64_t inflight = 0;  // file offset up to which records are being sent (in doubt)
};

// A whole header (identity, the first slot holding `first`, the second slot empty).
std::string encode_header(const std::string& database_id, const checkpoint_slot& first);

// One slot's bytes, and the file offset where the slot for seq is written.
std::string encode_slot(const checkpoint_slot& slot);
std::uint64_t slot_offset(std::uint64_t seq);

// The identity of a header, or nullopt when the bytes are short, the magic differs or the
// checksum fails.
std::optional<spool_identity> decode_identity(std::string_view header);

// The valid slot with the highest seq, or nullopt when neither slot is valid.
std::optional<checkpoint_slot> latest_checkpoint(std::string_view header);

}  // namespace queen::spool
