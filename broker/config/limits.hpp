#pragma once
// The request limits every parser checks (docs/http-api.md, "Conventions"), in one place: the counts come
// from the environment (config/config.cpp), the payload depth from the database.

#include "queen_segment.h"

#include <cstddef>

namespace queen::util {
class memory_budget;
}

namespace queen::config {

struct limits {
    std::size_t max_push_items = 10000;  // QUEEN_MAX_PUSH_ITEMS: items per push, acks per batch
    std::size_t max_pop_batch = 10000;   // QUEEN_MAX_POP_BATCH
    // Queue, partition, group names and transaction ids: the longest transaction id a segment
    // frame holds (QSEG_MAX_TXID), one limit for every name.
    std::size_t max_name_bytes = QSEG_MAX_TXID;
    // Nesting levels a payload may have: the database's queen.max_payload_depth(), read at
    // boot (docs/json-input.md); no default here, so that it has one source.
    std::size_t max_payload_depth;
    std::size_t max_json_values = 1'000'000;  // QUEEN_MAX_JSON_VALUES: values in one request body
    // The broker-wide budget JSON documents being parsed draw from (docs/security.md); none in
    // tests that parse alone.
    util::memory_budget* parse_budget = nullptr;
    // Streams (docs/streams.md, "Limits"): a state/get lists at most this many keys, and a
    // state key holds at most max_stream_key_bytes. The rows and bytes one answer (and one
    // lane) holds are the database's (queen.stream_state_max_rows/_bytes), checked there.
    std::size_t max_stream_state_keys = 10'000;
    std::size_t max_stream_key_bytes = 1024;
};

}  // namespace queen::config
