#pragma once
// The bodies of the three stream routes (docs/streams.md), parsed and validated without a
// database. A body that is not an object, or lacks the ids, is a 400 (api_error); a cycle whose
// operations are wrong is not: it is answered as a failed cycle (`refusal`), as the contract
// of POST /streams/v1/cycle says.
#include "api/shared/requests.hpp"
#include "domain/stream_cycle.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace queen::api {

struct stream_register_request {
    std::string name;
    std::string source_queue;
    std::optional<std::string> sink_queue;
    std::string config_hash;
    bool reset = false;
};

// POST /streams/v1/queries.
stream_register_request parse_stream_register(std::string_view body, const limits& lim);

struct stream_state_request {
    std::string query_id;                      // canonical UUID text
    std::optional<std::int64_t> partition_id;  // nullopt: names no partition (no rows)
    domain::stream_state_filter filter;
};

// POST /streams/v1/state/get.
stream_state_request parse_stream_state_get(std::string_view body, const limits& lim);

struct stream_cycle_request {
    std::string query_id;      // as sent
    std::string partition_id;  // as sent
    // The call, query and partition ids resolved, when `refusal` is empty.
    domain::stream_cycle_call call;
    std::optional<std::string> refusal;  // what makes the cycle fail before it runs
    std::size_t ack_count = 0;           // the ack's `count` (metrics only)
    util::memory_budget::ticket budget_share;
};

// POST /streams/v1/cycle. Push items keep their payloads as the bytes sent.
stream_cycle_request parse_stream_cycle(std::string_view body, const limits& lim);

}  // namespace queen::api
