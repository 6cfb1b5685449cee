#pragma once
// A validated push item and its outcome: what the push handler parses, push fusion and the
// store take, and the spool keeps (spool::record).
#include <cstdint>
#include <optional>
#include <string>

namespace queen::domain {

struct push_item {
    std::string queue;
    std::string partition;
    std::string transaction_id;
    std::optional<std::string> trace_id;  // canonical UUID text
    std::optional<std::string> producer_sub;
    std::string payload;  // JSON text

    bool operator==(const push_item&) const = default;
};

struct push_outcome {
    bool queued = false;  // false: duplicate
    std::int64_t partition_id = 0;
    std::int64_t offset = 0;  // of the stored message (the original for a duplicate)
    std::optional<std::int64_t> created_at_us;
};

}  // namespace queen::domain
