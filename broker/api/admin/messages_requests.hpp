#pragma once
// Parsing of the message browser's query strings (docs/operator-routes.md, "Browsing"). Pure
// functions like api/shared/requests.hpp: they throw api_error(bad_request, ...) naming what is wrong.
#include "api/shared/requests.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace queen::api {

// GET /api/v1/messages. Absent (or empty) filters match everything.
struct message_browse_request {
    std::optional<std::string> queue;
    std::optional<std::string> partition;
    std::optional<std::string> namespace_name;  // `ns` or `namespace`
    std::optional<std::string> task;
    std::optional<std::string> status;          // pending|processing|completed|dead_letter|deleted
    std::optional<std::string> consumer_group;  // status for this group alone
    std::int64_t from_us = 0;                   // createdAt >= from (Unix µs)
    std::int64_t to_us = 0;                     // createdAt <= to: the end of to's minute
    std::int64_t limit = 200;                   // 0..10,000
    std::int64_t offset = 0;                    // >= 0
};

// Keys: queue, partition, ns / namespace, task, status, consumerGroup, from (default now − 1 h),
// to (default now), limit, offset; now_us is the current time.
message_browse_request parse_message_browse(const std::map<std::string, std::string>& query, const limits& lim,
                                            std::int64_t now_us);

struct queue_messages_request {
    std::int64_t limit = 50;  // 0..10,000
    std::int64_t offset = 0;  // >= 0
};

// GET /api/v1/status/queues/:queue/messages: limit (default 50) and offset.
queue_messages_request parse_queue_messages(const std::map<std::string, std::string>& query);

}  // namespace queen::api
