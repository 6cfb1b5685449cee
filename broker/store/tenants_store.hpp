#pragma once
// Store layer (see store/queues_store.hpp): tenants and what they hold (docs/tenancy.md).
#include "db/pg_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace queen::store {

struct tenant_usage_row {
    std::string tenant;  // "" for the queues without a tenant (QUEEN_TENANCY_DEFAULT's)
    std::int64_t queues = 0;
    std::int64_t stored_bytes = 0;  // segments' bytes in the newest stats snapshot
};

// queen.tenant_usage: every tenant with a queue, in name order. want_bytes: this broker
// enforces QUEEN_TENANT_MAX_BYTES, so the snapshots must count bytes whoever refreshes them.
boost::asio::awaitable<std::vector<tenant_usage_row>> tenant_usage(db::pg_pool& pool, bool want_bytes);

}  // namespace queen::store
