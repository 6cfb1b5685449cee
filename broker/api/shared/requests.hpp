#pragma once
// Parsing and validation of request bodies and query strings into plain types. Pure
// functions: they need no database, and throw api_error(bad_request, ...) naming exactly
// what is wrong. The tolerances of docs/http-api.md ("Conventions") apply: null means absent for optional fields,
// unknown keys are ignored, an unknown subscriptionMode means "all".
#include "api/shared/api_error.hpp"
#include "api/shared/validate.hpp"
#include "config/limits.hpp"
#include "domain/push_item.hpp"
#include "util/memory_budget.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace queen::api {

inline constexpr const char* queue_mode_group = "__QUEUE_MODE__";

using config::limits;

// A field of a JSON object, with null treated as absent (the tolerance rule of docs/http-api.md).
inline const nlohmann::json* present_field(const nlohmann::json& obj, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
}

// A parsed request body and its share of the parse budget: keep the document for as long as
// `value` is used, so that its memory stays counted.
struct json_document {
    nlohmann::json value;
    util::memory_budget::ticket budget_share;
};

// What a parsed document is charged against the parse budget: its body's bytes plus this per
// value (nlohmann's value and its container or string overhead: 117 bytes measured for empty
// arrays, the dearest kind; docs/security.md).
inline constexpr std::size_t json_value_cost_bytes = 128;

// Parses a JSON body after check_json_text (api/shared/json_guard.hpp); 400 naming what is wrong
// when it is not JSON or breaks a rule of that check, 413 past lim.max_json_values, 503 with
// Retry-After when lim.parse_budget cannot take the document's cost now.
json_document parse_json_body(std::string_view body, const limits& lim);

// Stamps every item with the pushing token's "sub" (none: auth off, or no sub), the only
// source of producer_sub: parse_push never reads a producerSub from the body.
void stamp_producer(std::vector<domain::push_item>& items, const std::optional<std::string>& subject);

// A UUIDv7 string (time-ordered), used for generated transaction ids.
std::string generate_uuid_v7();

enum class ack_status { completed, failed, retry, dlq };
const char* to_sql(ack_status s);

struct ack_item {
    std::string transaction_id;
    std::string partition_id;  // as sent; resolved by the handler
    ack_status status = ack_status::completed;
    std::optional<std::string> error;
    std::optional<std::string> lease_id;
    std::optional<std::int64_t> offset;
    std::string consumer_group;  // queue mode spelled __QUEUE_MODE__
};

// POST /api/v1/ack.
ack_item parse_ack(const nlohmann::json& body, const limits& lim);
// POST /api/v1/ack/batch.
std::vector<ack_item> parse_ack_batch(const nlohmann::json& body, const limits& lim);

struct pop_params {
    std::string queue;
    std::optional<std::string> partition;
    std::string consumer_group = queue_mode_group;
    std::int64_t batch = 1;
    std::int64_t partitions = 1;
    bool wait = false;
    std::int64_t timeout_ms = 30000;
    bool auto_ack = false;
    bool subscribe_all = true;                    // from the beginning
    std::optional<std::int64_t> subscription_at;  // Unix µs; nullopt with !subscribe_all: now
};

// The pop routes' path parameters and query string.
// `from_beginning_by_default`: where a new group starts when the pop names no
// subscriptionMode (the broker's DEFAULT_SUBSCRIPTION_MODE).
pop_params parse_pop(const std::string& queue, const std::optional<std::string>& partition,
                     const std::map<std::string, std::string>& query, const limits& lim,
                     bool from_beginning_by_default = true);

struct configure_request {
    std::string queue;
    std::optional<std::string> namespace_name;
    std::optional<std::string> task;
    nlohmann::json options = nlohmann::json::object();  // validated options only
};

// POST /api/v1/configure.
configure_request parse_configure(const nlohmann::json& body, const limits& lim);

// Query-string booleans: "true" and "1" are true, everything else false.
bool query_bool(const std::string& value);

}  // namespace queen::api
