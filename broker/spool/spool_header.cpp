#include "spool/spool_header.hpp"

#include "spool/spool_record.hpp"
#include "util/big_endian.hpp"

#include <algorithm>
#include <cstring>

namespace queen::spool {

namespace {

using namespace header_layout;

constexpr char magic[magic_bytes] = {'Q', 'N', 'S', 'P', 'O', 'O', 'L', '1'};

bool checksum_ok(const char* part) {
    return util::load_be32(part + crc_at) == crc32c(part, checked_bytes);
}

}  // namespace

std::string encode_slot(const checkpoint_slot& slot) {
    std::string s(slot_bytes, '\0');
    util::store_be64(s.data() + slot_seq_at, slot.seq);
    util::store_be64(s.data() + slot_drained_at, slot.drained);
    util::store_be64(s.data() + slot_inflight_at, slot.inflight);
    util::store_be32(s.data() + crc_at, crc32c(s.data(), checked_bytes));
    return s;
}

std::uint64_t slot_offset(std::uint64_t seq) {
    return slots_at + (seq % 2) * slot_bytes;
}

std::string encode_header(const std::string& database_id, const checkpoint_slot& first) {
    std::string h(total_bytes, '\0');
    std::memcpy(h.data() + magic_at, magic, magic_bytes);
    util::store_be32(h.data() + version_at, spool_file_version);
    util::store_be32(h.data() + size_at, static_cast<std::uint32_t>(total_bytes));
    std::memcpy(h.data() + database_id_at, database_id.data(), std::min(database_id.size(), database_id_bytes));
    util::store_be32(h.data() + crc_at, crc32c(h.data(), checked_bytes));
    const std::string slot = encode_slot(first);
    std::memcpy(h.data() + slots_at, slot.data(), slot.size());
    return h;
}

std::optional<spool_identity> decode_identity(std::string_view header) {
    if (header.size() < total_bytes || std::memcmp(header.data() + magic_at, magic, magic_bytes) != 0 ||
        !checksum_ok(header.data()))
        return std::nullopt;
    spool_identity id;
    id.version = util::load_be32(header.data() + version_at);
    std::string_view db(header.data() + database_id_at, database_id_bytes);
    id.database_id = std::string(db.substr(0, db.find('\0')));
    return id;
}

std::optional<checkpoint_slot> latest_checkpoint(std::string_view header) {
    std::optional<checkpoint_slot> best;
    for (std::size_t s = 0; s < 2; ++s) {
        const char* p = header.data() + slots_at + s * slot_bytes;
        if (!checksum_ok(p)) continue;
        checkpoint_slot slot{util::load_be64(p + slot_seq_at), util::load_be64(p + slot_drained_at),
                             util::load_be64(p + slot_inflight_at)};
        if (slot.seq == 0 || (best && slot.seq <= best->seq)) continue;
        best = slot;
    }
    return best;
}

}  // namespace queen::spool
