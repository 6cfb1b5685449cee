#include "metrics/scrape_cache.hpp"

#include "log/log.hpp"

namespace queen::metrics {

boost::asio::awaitable<cached_scrape> scrape_cache::get() {
    {
        std::lock_guard lock(mutex_);
        const auto now = std::chrono::steady_clock::now();
        const bool fresh = fetched_at_ && now - *fetched_at_ < ttl_;
        if (fresh || fetching_) co_return current_;
        fetching_ = true;
    }
    std::optional<std::vector<store::metrics_sample>> rows;
    try {
        rows = co_await store::metrics_scrape(pool_);
    } catch (const std::exception& e) {
        log::warn("metrics scrape: database not reachable: {}", e.what());
    }
    std::lock_guard lock(mutex_);
    fetching_ = false;
    fetched_at_ = std::chrono::steady_clock::now();
    current_.healthy = rows.has_value();
    current_.rows = std::move(rows);  // a failed fetch drops the database's families: stale gauges would mislead
    co_return current_;
}

}  // namespace queen::metrics
