#pragma once
// Parsing and validation for the lease-extension and consumer-group routes (docs/http-api.md, docs/consumer-groups.md,
// "POST /api/v1/lease/:leaseId/extend" and "Consumer groups"; decisions in docs/consumer-groups.md). Pure functions
// like api/requests: no database; they throw api_error(bad_request, ...) naming exactly what is wrong. null means
// absent; unknown keys are ignored.
#include "api/shared/api_error.hpp"
#include "api/shared/requests.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace queen::api {

inline constexpr std::int64_t default_extend_seconds = 60;
inline constexpr std::int64_t max_extend_seconds = 7 * 86400;  // the largest leaseTime

// Body of POST /api/v1/lease/:leaseId/extend: {seconds?=60}. An empty body, `null` and {}
// all mean the default; seconds must be a positive integer (an integral float such as 30.0
// is accepted, as configure accepts it) of at most max_extend_seconds.
std::int64_t parse_extend_seconds(std::string_view body, const limits& lim);

struct seek_request {
    bool to_end = false;
    std::optional<std::int64_t> timestamp_us;  // Unix µs; set exactly when !to_end
};

// Body of POST /api/v1/consumer-groups/:group/queues/:queue/seek: {toEnd:true} or
// {timestamp:ISO}. 400 when neither (toEnd:false counts as not given), both, or a malformed
// time stamp or a wrong type is given.
seek_request parse_seek(std::string_view body, const limits& lim);

// Body of POST /api/v1/consumer-groups/:group/subscription: {subscriptionTimestamp:ISO};
// returns Unix µs. 400 when it is missing, null, not a string or not an ISO-8601 time stamp.
std::int64_t parse_subscription(std::string_view body, const limits& lim);

// A consumer-group name from a path: 1..lim.max_name_bytes bytes, no NUL.
void check_group_name(const std::string& group, const limits& lim);

}  // namespace queen::api
