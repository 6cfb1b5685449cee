#pragma once
// The database's part of a scrape, shared by concurrent scrapers: fetched at most once per
// 5 s; while one fetch runs, other scrapers take the previous answer.
#include "db/pg_pool.hpp"
#include "store/metrics_store.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <mutex>
#include <optional>
#include <vector>

namespace queen::metrics {

struct cached_scrape {
    std::optional<std::vector<store::metrics_sample>> rows;  // nullopt before the first answer and after a failure
    bool healthy = false;                                    // the newest fetch succeeded
};

class scrape_cache {
public:
    explicit scrape_cache(db::pg_pool& pool, std::chrono::steady_clock::duration ttl = std::chrono::seconds(5))
        : pool_(pool), ttl_(ttl) {}

    // The newest answer, fetched first when it is older than the ttl and no fetch runs; never throws.
    boost::asio::awaitable<cached_scrape> get();

private:
    db::pg_pool& pool_;
    std::chrono::steady_clock::duration ttl_;
    std::mutex mutex_;
    cached_scrape current_;
    std::optional<std::chrono::steady_clock::time_point> fetched_at_;
    bool fetching_ = false;
};

}  // namespace queen::metrics
