#include "api/resources_requests.hpp"

namespace queen::api {

namespace {

// A name filter; an absent or empty value is no filter.
std::optional<std::string> name_filter(const std::map<std::string, std::string>& q, const char* key,
                                       const limits& lim) {
    auto it = q.find(key);
    if (it == q.end() || it->second.empty()) return std::nullopt;
    check_name(key, it->second, lim);
    return it->second;
}

}  // namespace

queue_listing_request parse_queue_listing(const std::map<std::string, std::string>& q, const limits& lim) {
    queue_listing_request r;
    r.namespace_name = name_filter(q, "namespace", lim);
    r.task = name_filter(q, "task", lim);
    r.limit = query_int(q, "limit", max_listing_limit, 0, max_listing_limit);
    r.offset = query_int(q, "offset", 0, 0, 2147483647);
    return r;
}

}  // namespace queen::api
