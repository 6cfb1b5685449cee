#pragma once
// Parsing of the status and analytics routes' query strings (docs/status-and-analytics.md;
// docs/http-api.md "Time windows and counts"). Pure functions: they throw api_error(bad_request, ...)
// naming the parameter.
#include "api/shared/requests.hpp"
#include "store/activity_store.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace queen::api {

// from (default now − default_span), to (default now), from ≤ to; queue, namespace and task
// filters (an empty value is no filter).
store::status_window parse_status_window(const std::map<std::string, std::string>& query, const limits& lim,
                                         std::chrono::seconds default_span, std::int64_t now_us);

enum class analytics_interval { minute, hour, day };

struct status_analytics_request {
    store::status_window window;
    analytics_interval interval = analytics_interval::hour;
};

// GET /api/v1/status/analytics: the window (default span 24 h) and interval (minute, hour or
// day; default hour); at most max_analytics_points buckets.
inline constexpr std::int64_t max_analytics_points = 10000;
status_analytics_request parse_status_analytics(const std::map<std::string, std::string>& query, const limits& lim,
                                                std::int64_t now_us);
const char* interval_name(analytics_interval i);

}  // namespace queen::api
