#pragma once
// A short-lived cache of per-queue settings the broker needs on the push path (today:
// encryptionEnabled). Entries live `ttl`; configure on this broker forgets its queue at once,
// other brokers see a change within ttl.
#include "db/pg_pool.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace queen::services {

class queue_settings {
public:
    queue_settings(db::pg_pool& pool, std::chrono::milliseconds ttl) : pool_(pool), ttl_(ttl) {}

    // encryptionEnabled of each queue (false for a queue that does not exist yet). When the
    // database cannot be asked, queues with no known value are reported as nullopt.
    boost::asio::awaitable<std::map<std::string, std::optional<bool>>> encryption(const std::set<std::string>& queues);
    void forget(const std::string& queue);

private:
    struct entry {
        bool encrypted = false;
        std::chrono::steady_clock::time_point fetched;
    };
    db::pg_pool& pool_;
    std::chrono::milliseconds ttl_;
    std::mutex mutex_;
    std::map<std::string, entry> cache_;
};

}  // namespace queen::services
