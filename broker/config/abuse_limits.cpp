#include "config/abuse_limits.hpp"

#include <algorithm>

namespace queen::config {

abuse_limits read_abuse_limits(env_reader& r) {
    abuse_limits l;
    if (auto v = r.number("max_connections_per_client", {"QUEEN_MAX_CONNECTIONS_PER_CLIENT"}, 0, 1000000))
        l.max_connections_per_client = static_cast<std::size_t>(*v);
    if (auto v = r.number("max_longpolls_per_client", {"QUEEN_MAX_LONGPOLLS_PER_CLIENT"}, 0, 1000000))
        l.max_longpolls_per_client = static_cast<std::size_t>(*v);
    // Below 1 KiB an ordinary client's request line and headers would not fit.
    if (auto v = r.number("max_header_bytes", {"QUEEN_MAX_HEADER_BYTES"}, 1024, 1LL << 24))
        l.max_header_bytes = static_cast<std::size_t>(*v);
    if (auto v = r.number("max_header_count", {"QUEEN_MAX_HEADER_COUNT"}, 0, 100000))
        l.max_header_count = static_cast<std::size_t>(*v);
    if (auto v = r.number("rate_limit_per_second", {"QUEEN_RATE_LIMIT_PER_SECOND"}, 0, 1000000))
        l.rate_per_second = static_cast<double>(*v);
    if (auto v = r.number("rate_limit_burst", {"QUEEN_RATE_LIMIT_BURST"}, 0, 100000000))
        l.rate_burst = static_cast<double>(*v);
    if (auto v = r.number("json_parse_budget_bytes", {"QUEEN_JSON_PARSE_BUDGET_BYTES"}, 1LL << 20, 1LL << 40))
        l.json_parse_budget_bytes = static_cast<std::size_t>(*v);
    if (l.rate_burst == 0) l.rate_burst = std::max(1.0, l.rate_per_second);
    return l;
}

}  // namespace queen::config
