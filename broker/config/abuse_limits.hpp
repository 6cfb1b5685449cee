#pragma once
// Limits on what one client may hold or ask for (docs/security.md, "Abuse limits"). Each is
// off (0) by default except the header size, which Beast's parser always needs, and the
// broker-wide budget of parsed JSON, which bounds the broker's memory.
#include "config/env_reader.hpp"

#include <cstddef>

namespace queen::config {

struct abuse_limits {
    std::size_t max_connections_per_client = 0;  // QUEEN_MAX_CONNECTIONS_PER_CLIENT: open connections per address
    std::size_t max_longpolls_per_client = 0;    // QUEEN_MAX_LONGPOLLS_PER_CLIENT: parked pops per address
    std::size_t max_header_bytes = 64 * 1024;    // QUEEN_MAX_HEADER_BYTES: request line and header fields
    std::size_t max_header_count = 0;            // QUEEN_MAX_HEADER_COUNT: header fields per request
    double rate_per_second = 0;                  // QUEEN_RATE_LIMIT_PER_SECOND: requests per token subject
    double rate_burst = 0;                       // QUEEN_RATE_LIMIT_BURST: 0 = one second's worth
    // QUEEN_JSON_PARSE_BUDGET_BYTES: the cost (api/shared/requests.hpp) of the JSON documents all
    // requests hold at once; 503 past it.
    std::size_t json_parse_budget_bytes = 256u << 20;
};

// Reads the QUEEN_* abuse limits; throws std::invalid_argument naming a bad variable.
abuse_limits read_abuse_limits(env_reader& r);

}  // namespace queen::config
