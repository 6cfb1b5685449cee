#pragma once
// Limits on what one client may hold or ask for (docs/security.md, "Abuse limits"). Each is
// off (0) by default except the header size, which Beast's parser always needs.
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
};

// Reads the QUEEN_* abuse limits; throws std::invalid_argument naming a bad variable.
abuse_limits read_abuse_limits(env_reader& r);

}  // namespace queen::config
