#include "config/tenant_limits.hpp"

#include <algorithm>
#include <stdexcept>

namespace queen::config {

tenant_limits read_tenant_limits(env_reader& r, bool tenancy_on) {
    tenant_limits l;
    if (auto v = r.number("tenant_rate_limit_per_second", {"QUEEN_TENANT_RATE_LIMIT_PER_SECOND"}, 0, 1000000))
        l.rate_per_second = static_cast<double>(*v);
    if (auto v = r.number("tenant_rate_limit_burst", {"QUEEN_TENANT_RATE_LIMIT_BURST"}, 0, 100000000))
        l.rate_burst = static_cast<double>(*v);
    if (auto v = r.number("tenant_max_longpolls", {"QUEEN_TENANT_MAX_LONGPOLLS"}, 0, 1000000))
        l.max_longpolls = static_cast<std::size_t>(*v);
    if (auto v = r.number("tenant_max_queues", {"QUEEN_TENANT_MAX_QUEUES"}, 0, 1000000000))
        l.max_queues = static_cast<std::uint64_t>(*v);
    if (auto v = r.number("tenant_max_bytes", {"QUEEN_TENANT_MAX_BYTES"}, 0, 1LL << 60))
        l.max_bytes = static_cast<std::uint64_t>(*v);
    if (l.rate_burst == 0) l.rate_burst = std::max(1.0, l.rate_per_second);
    if (l.any() && !tenancy_on)
        throw std::invalid_argument("the QUEEN_TENANT_* limits need QUEEN_TENANCY_HEADER: they count per tenant");
    return l;
}

}  // namespace queen::config
