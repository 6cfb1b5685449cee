#pragma once
// Parsing of the listing routes' query strings (docs/operator-routes.md). Pure functions like
// api/shared/requests.hpp: they throw api_error(bad_request, ...) naming what is wrong.
#include "api/shared/requests.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace queen::api {

// The largest limit any listing accepts (queenctl lists with --limit 10000).
inline constexpr std::int64_t max_listing_limit = 10000;

struct queue_listing_request {
    std::optional<std::string> namespace_name;  // exact match
    std::optional<std::string> task;            // exact match
    std::int64_t limit = max_listing_limit;     // 0..max_listing_limit
    std::int64_t offset = 0;                    // >= 0
};

// GET /api/v1/resources/queues: namespace, task (an empty value is no filter), limit
// (default and maximum 10,000), offset (default 0).
queue_listing_request parse_queue_listing(const std::map<std::string, std::string>& query, const limits& lim);

}  // namespace queen::api
