#pragma once
// The request limits every parser checks (API.md, "Limits"), in one place: the first three
// come from the environment (config/config.cpp), the payload depth from the database.

#include <cstddef>

namespace queen::config {

struct limits {
    std::size_t max_push_items = 10000;  // QUEEN_MAX_PUSH_ITEMS: items per push, acks per batch
    std::size_t max_pop_batch = 10000;   // QUEEN_MAX_POP_BATCH
    std::size_t max_name_bytes = 255;    // queue, partition, group names and transaction ids
    // Nesting levels a payload may have: the database's queen.max_payload_depth(), read at
    // boot (docs/json-input.md); no default here, so that it has one source.
    std::size_t max_payload_depth;
};

}  // namespace queen::config
