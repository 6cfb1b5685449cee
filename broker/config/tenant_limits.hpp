#pragma once
// Limits per tenant (docs/tenancy.md, "Limits per tenant"), on top of the per-client abuse
// limits. Each is off (0) by default and needs tenancy (QUEEN_TENANCY_HEADER).
#include "config/env_reader.hpp"

#include <cstddef>
#include <cstdint>

namespace queen::config {

struct tenant_limits {
    double rate_per_second = 0;     // QUEEN_TENANT_RATE_LIMIT_PER_SECOND: requests per tenant
    double rate_burst = 0;          // QUEEN_TENANT_RATE_LIMIT_BURST: 0 = one second's worth
    std::size_t max_longpolls = 0;  // QUEEN_TENANT_MAX_LONGPOLLS: parked pops per tenant
    std::uint64_t max_queues = 0;   // QUEEN_TENANT_MAX_QUEUES: queues per tenant (checked in SQL)
    std::uint64_t max_bytes = 0;    // QUEEN_TENANT_MAX_BYTES: segment bytes per tenant (stats snapshot)

    bool any() const noexcept { return rate_per_second > 0 || max_longpolls || max_queues || max_bytes; }
};

// Reads the QUEEN_TENANT_* limits; throws std::invalid_argument naming a bad variable, or one
// that is set while tenancy is off.
tenant_limits read_tenant_limits(env_reader& r, bool tenancy_on);

}  // namespace queen::config
