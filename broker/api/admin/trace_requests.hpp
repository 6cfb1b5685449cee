#pragma once
// Parsing of the trace routes (docs/traces.md). Pure functions like api/shared/requests.hpp: they
// throw api_error(bad_request, ...) naming what is wrong.
#include "api/shared/requests.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace queen::api {

struct trace_request {
    std::string partition_id;              // as sent (opaque); resolved by the handler
    std::string transaction_id;            // a name (api/validate: check_name)
    std::string consumer_group;            // "__QUEUE_MODE__" when absent, null or ""
    std::string event_type = "info";       // a name
    std::string data;                      // JSON text, verbatim from the request (null allowed)
    std::vector<std::string> trace_names;  // each a name, duplicates dropped, order kept
};

inline constexpr std::size_t max_trace_names = 100;

// POST /api/v1/traces {transactionId, partitionId, consumerGroup?, eventType?, data, traceNames?}.
// traceNames may be an array of strings or a single string.
trace_request parse_trace(const nlohmann::json& body, const limits& lim);

struct trace_page {
    std::int64_t limit = 100;
    std::int64_t offset = 0;
};

// limit (1..1000, default `default_limit`) and offset (>= 0, default 0).
trace_page parse_trace_page(const std::map<std::string, std::string>& query, std::int64_t default_limit);

}  // namespace queen::api
