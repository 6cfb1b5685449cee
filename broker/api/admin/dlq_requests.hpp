#pragma once
// Parsing of the dead-letter routes' filters (docs/dead-letters.md). Pure functions like
// api/shared/requests.hpp: they throw api_error(bad_request, ...) naming what is wrong.
#include "api/shared/requests.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace queen::api {

// The filter shared by GET /api/v1/dlq, POST /api/v1/dlq/requeue and DELETE /api/v1/dlq.
// An absent (or empty) value is no condition; the given ones combine with AND.
struct dlq_filter {
    std::optional<std::string> queue;
    std::optional<std::string> consumer_group;  // exact; "__QUEUE_MODE__" is queue mode
    std::optional<std::string> partition;       // partition name
    std::optional<std::int64_t> from_us;        // failedAt >= from (Unix µs)
    std::optional<std::int64_t> to_us;          // failedAt <= to
    std::optional<std::string> message_id;      // canonical message id (partition + offset)
    bool all = false;                           // explicit "every dead letter" for requeue/purge

    // True when no condition is given (all does not count).
    bool empty() const noexcept { return !queue && !consumer_group && !partition && !from_us && !to_us && !message_id; }
};

// Keys: queue, consumerGroup, partition, from, to (ISO-8601), id (message id), all.
dlq_filter parse_dlq_filter(const std::map<std::string, std::string>& query, const limits& lim);

struct dlq_page {
    std::int64_t limit = 100;  // 1..1000
    std::int64_t offset = 0;   // >= 0
};

// GET /api/v1/dlq paging: limit (default 100, 1..1000) and offset (default 0).
dlq_page parse_dlq_page(const std::map<std::string, std::string>& query);

struct dlq_requeue_request {
    dlq_filter filter;
    std::int64_t limit = 0;  // at most this many dead letters, oldest failure first
};

// POST /api/v1/dlq/requeue: the filter (and limit, default and maximum lim.max_push_items)
// in the query string or in a JSON body object with the same keys (strings, `all` a
// boolean, `limit` an integer); a key given in both places is a 400. Refuses an empty
// filter without all=true.
dlq_requeue_request parse_dlq_requeue(const std::map<std::string, std::string>& query, std::string_view body,
                                      const limits& lim);

// DELETE /api/v1/dlq: the filter in the query string; refuses an empty filter without all=true.
dlq_filter parse_dlq_purge(const std::map<std::string, std::string>& query, const limits& lim);

}  // namespace queen::api
