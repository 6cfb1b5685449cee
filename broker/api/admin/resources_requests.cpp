#include "api/admin/resources_requests.hpp"

namespace queen::api {

queue_listing_request parse_queue_listing(const std::map<std::string, std::string>& q, const limits& lim) {
    queue_listing_request r;
    r.namespace_name = query_name(q, "namespace", lim);
    r.task = query_name(q, "task", lim);
    r.limit = query_int(q, "limit", max_listing_limit, 0, max_listing_limit);
    r.offset = query_int(q, "offset", 0, 0, 2147483647);
    return r;
}

}  // namespace queen::api
