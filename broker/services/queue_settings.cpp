#include "services/queue_settings.hpp"

#include "store/queues_store.hpp"

namespace queen::services {

boost::asio::awaitable<std::map<std::string, std::optional<bool>>> queue_settings::encryption(
    const std::set<std::string>& queues) {
    std::map<std::string, std::optional<bool>> out;
    std::set<std::string> missing;
    const auto now = std::chrono::steady_clock::now();
    {
        std::lock_guard lock(mutex_);
        for (const auto& q : queues) {
            auto it = cache_.find(q);
            if (it != cache_.end() && now - it->second.fetched < ttl_)
                out[q] = it->second.encrypted;
            else
                missing.insert(q);
        }
    }
    if (missing.empty()) co_return out;
    try {
        const auto fetched = co_await store::queue_encryption(pool_, missing);
        std::lock_guard lock(mutex_);
        for (const auto& [name, enc] : fetched) {
            cache_[name] = entry{enc, now};
            out[name] = enc;
        }
    } catch (const db::pg_error& e) {
        if (e.kind() != db::pg_error_kind::connection_lost) throw;
        std::lock_guard lock(mutex_);
        for (const auto& q : missing) {
            auto it = cache_.find(q);
            out[q] = it == cache_.end() ? std::nullopt : std::optional<bool>(it->second.encrypted);
        }
    }
    co_return out;
}

void queue_settings::forget(const std::string& queue) {
    std::lock_guard lock(mutex_);
    cache_.erase(queue);
}

}  // namespace queen::services
