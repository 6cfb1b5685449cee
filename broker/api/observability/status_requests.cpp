#include "api/observability/status_requests.hpp"

#include "api/shared/validate.hpp"
#include "domain/message_id.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace queen::api {

namespace {

std::int64_t interval_us(analytics_interval i) {
    switch (i) {
        case analytics_interval::minute:
            return 60'000'000LL;
        case analytics_interval::hour:
            return 3'600'000'000LL;
        case analytics_interval::day:
            return 86'400'000'000LL;
    }
    return 3'600'000'000LL;
}

}  // namespace

store::status_window parse_status_window(const std::map<std::string, std::string>& q, const limits& lim,
                                         std::chrono::seconds default_span, std::int64_t now_us) {
    store::status_window w;
    w.to_us = query_time(q, "to").value_or(now_us);
    w.from_us = query_time(q, "from").value_or(
        std::max<std::int64_t>(domain::earliest_time_us, w.to_us - default_span.count() * 1'000'000LL));
    if (w.from_us > w.to_us) throw bad_request("from must not be after to");
    w.queue = query_name(q, "queue", lim);
    w.namespace_name = query_name(q, "namespace", lim);
    w.task = query_name(q, "task", lim);
    return w;
}

status_analytics_request parse_status_analytics(const std::map<std::string, std::string>& q, const limits& lim,
                                                std::int64_t now_us) {
    status_analytics_request r;
    r.window = parse_status_window(q, lim, std::chrono::hours(24), now_us);
    if (auto it = q.find("interval"); it != q.end() && !it->second.empty()) {
        if (it->second == "minute")
            r.interval = analytics_interval::minute;
        else if (it->second == "hour")
            r.interval = analytics_interval::hour;
        else if (it->second == "day")
            r.interval = analytics_interval::day;
        else
            throw bad_request(fmt::format("interval must be minute, hour or day, got '{}'", it->second));
    }
    const std::int64_t width = interval_us(r.interval);
    const std::int64_t points = (r.window.to_us / width) - (r.window.from_us / width) + 1;
    if (points > max_analytics_points)
        throw bad_request(fmt::format("the window holds {} {} buckets; at most {} are answered", points,
                                      interval_name(r.interval), max_analytics_points));
    return r;
}

const char* interval_name(analytics_interval i) {
    switch (i) {
        case analytics_interval::minute:
            return "minute";
        case analytics_interval::hour:
            return "hour";
        case analytics_interval::day:
            return "day";
    }
    return "hour";
}

}  // namespace queen::api
