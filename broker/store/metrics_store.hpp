#pragma once
// The database's part of a Prometheus scrape: queen.metrics_scrape() (docs/metrics.md).
#include "db/pg_pool.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>
#include <vector>

namespace queen::store {

// One row of queen.metrics_scrape().
struct metrics_sample {
    std::string family;
    std::optional<std::string> queue, consumer_group, label, label_value;
    double value = 0;
};

// Every row of queen.metrics_scrape(); throws db::pg_error when the database does not answer.
boost::asio::awaitable<std::vector<metrics_sample>> metrics_scrape(db::pg_pool& pool);

}  // namespace queen::store
