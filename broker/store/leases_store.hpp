#pragma once
// Store layer (see store/queues_store.hpp): leases.
#include "db/pg_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>

#include <cstdint>
#include <string>

namespace queen::store {

enum class lease_extension_status { extended, expired, not_found };

struct lease_extension {
    lease_extension_status status = lease_extension_status::not_found;
    std::int64_t expires_at_us = 0;  // when extended: the lease's expiry after the call
};

// queen.extend_lease: every live lease with the id to max(expiry, now + seconds); a lease on
// a queue outside the tenant `scope` is not_found.
boost::asio::awaitable<lease_extension> extend_lease(db::pg_pool& pool, const std::string& lease_id,
                                                     std::int64_t seconds, const std::optional<std::string>& scope);

}  // namespace queen::store
