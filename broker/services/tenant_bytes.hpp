#pragma once
// QUEEN_TENANT_MAX_BYTES (docs/tenancy.md, "Limits per tenant"): each tenant's stored bytes as
// the newest stats snapshot counts them, re-read at most once per `ttl` and only when a push
// asks, so the check costs a map lookup and no push writes a counter. Thread-safe.
#include "db/pg_pool.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace queen::services {

class tenant_bytes {
public:
    // max_bytes 0: off (no read, nothing refused).
    tenant_bytes(db::pg_pool& pool, std::uint64_t max_bytes, std::chrono::milliseconds ttl)
        : pool_(pool), max_bytes_(max_bytes), ttl_(ttl) {}

    std::uint64_t limit() const noexcept { return max_bytes_; }

    // The bytes `scope` (a tenant_scope's sql_scope: "" or a tenant) stores when they reach the
    // limit, else nullopt. When the database cannot be read, the last figures stand (none at
    // first: nothing is refused).
    boost::asio::awaitable<std::optional<std::uint64_t>> at_limit(const std::string& scope);

private:
    db::pg_pool& pool_;
    std::uint64_t max_bytes_;
    std::chrono::milliseconds ttl_;
    std::mutex mu_;
    std::unordered_map<std::string, std::uint64_t> bytes_;
    std::optional<std::chrono::steady_clock::time_point> read_at_;
    bool reading_ = false;  // one read at a time; others use the figures they find
};

}  // namespace queen::services
