#include "core/queue_settings.hpp"

#include "db/pg_array.hpp"

namespace queen::core {

boost::asio::awaitable<std::map<std::string, std::optional<bool>>> queue_settings::encryption(
    const std::set<std::string>& queues) {
    std::map<std::string, std::optional<bool>> out;
    std::set<std::string> missing;
    const auto now = std::chrono::steady_clock::now();
    {
        std::lock_guard lock(mutex_);
        for (const auto& q : queues) {
            auto it = cache_.find(q);
            if (it != cache_.end() && now - it->second.fetched < ttl_) out[q] = it->second.encrypted;
            else missing.insert(q);
        }
    }
    if (missing.empty()) co_return out;
    db::pg_array_builder names;
    for (const auto& q : missing) names.add(q);
    const std::string literal = names.finish();
    std::vector<db::pg_param> params{db::pg_param::text(literal)};
    try {
        auto res = co_await pool_.exec(
            "SELECT n, coalesce(q.encryption_enabled, false) FROM unnest($1::text[]) AS n "
            "LEFT JOIN queen.queues q ON q.name = n",
            params);
        std::lock_guard lock(mutex_);
        for (int row = 0; row < res.rows(); ++row) {
            std::string name(res.text(row, 0));
            bool enc = res.boolean(row, 1);
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

}  // namespace queen::core
