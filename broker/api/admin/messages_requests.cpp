#include "api/admin/messages_requests.hpp"

#include "api/admin/resources_requests.hpp"
#include "domain/message_id.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace queen::api {

namespace {

constexpr std::int64_t hour_us = 3600LL * 1000 * 1000;
constexpr std::int64_t minute_us = 60LL * 1000 * 1000;
constexpr std::array<std::string_view, 5> statuses{"pending", "processing", "completed", "dead_letter", "deleted"};

// A query value, with "" treated as absent.
std::optional<std::string> value_of(const std::map<std::string, std::string>& q, const char* key) {
    auto it = q.find(key);
    if (it == q.end() || it->second.empty()) return std::nullopt;
    return it->second;
}

std::optional<std::string> name_of(const std::map<std::string, std::string>& q, const char* key, const limits& lim) {
    auto v = value_of(q, key);
    if (v) check_name(key, *v, lim);
    return v;
}

std::optional<std::int64_t> time_of(const std::map<std::string, std::string>& q, const char* key) {
    auto v = value_of(q, key);
    if (!v) return std::nullopt;
    auto t = domain::parse_iso_time(*v);
    if (!t) throw bad_request(fmt::format("{} must be an ISO-8601 time stamp, got '{}'", key, *v));
    return t;
}

}  // namespace

message_browse_request parse_message_browse(const std::map<std::string, std::string>& q, const limits& lim,
                                            std::int64_t now_us) {
    message_browse_request r;
    r.queue = name_of(q, "queue", lim);
    r.partition = name_of(q, "partition", lim);
    r.namespace_name = name_of(q, "ns", lim);
    if (!r.namespace_name) r.namespace_name = name_of(q, "namespace", lim);
    r.task = name_of(q, "task", lim);
    if (auto s = value_of(q, "status")) {
        bool known = false;
        for (auto k : statuses) known = known || *s == k;
        if (!known)
            throw bad_request(
                fmt::format("status must be pending, processing, completed, dead_letter or deleted, got '{}'", *s));
        r.status = std::move(*s);
    }
    r.consumer_group = name_of(q, "consumerGroup", lim);
    const auto from = time_of(q, "from");
    const auto to = time_of(q, "to");
    r.to_us = to.value_or(now_us);
    r.from_us = from.value_or(std::max<std::int64_t>(domain::earliest_time_us, r.to_us - hour_us));
    if (r.from_us > r.to_us) throw bad_request("from must not be after to");
    // The dashboard's filter has minute precision: to covers the whole of its minute.
    const auto minute = r.to_us >= 0 ? r.to_us / minute_us : (r.to_us - minute_us + 1) / minute_us;
    r.to_us = minute * minute_us + minute_us - 1;
    r.limit = query_int(q, "limit", 200, 0, max_listing_limit);
    r.offset = query_int(q, "offset", 0, 0, 2147483647);
    return r;
}

queue_messages_request parse_queue_messages(const std::map<std::string, std::string>& q) {
    queue_messages_request r;
    r.limit = query_int(q, "limit", 50, 0, max_listing_limit);
    r.offset = query_int(q, "offset", 0, 0, 2147483647);
    return r;
}

}  // namespace queen::api
