#include "api/admin/trace_requests.hpp"

#include "api/shared/json_guard.hpp"

#include <fmt/core.h>

#include <charconv>
#include <set>

namespace queen::api {

using nlohmann::json;

namespace {

std::string bounded_string(const json& v, const std::string& what, const limits& lim) {
    if (!v.is_string()) throw bad_request(what + " must be a string");
    auto s = v.get<std::string>();
    check_name(what, s, lim);
    return s;
}

}  // namespace

trace_request parse_trace(const json& body, const limits& lim) {
    if (!body.is_object()) throw bad_request("request body must be a JSON object");
    trace_request t;
    const json* tx = present_field(body, "transactionId");
    if (!tx) throw bad_request("transactionId is required");
    t.transaction_id = bounded_string(*tx, "transactionId", lim);
    const json* pid = present_field(body, "partitionId");
    if (!pid) throw bad_request("partitionId is required");
    if (!pid->is_string()) throw bad_request("partitionId must be a string");
    t.partition_id = pid->get<std::string>();
    check_no_nul("partitionId", t.partition_id);
    if (t.partition_id.empty()) throw bad_request("partitionId must not be empty");
    t.consumer_group = queue_mode_group;
    if (const json* g = present_field(body, "consumerGroup")) {
        if (!g->is_string()) throw bad_request("consumerGroup must be a string");
        auto s = g->get<std::string>();
        if (!s.empty()) check_name("consumerGroup", s, lim);
        if (!s.empty()) t.consumer_group = std::move(s);
    }
    if (const json* e = present_field(body, "eventType")) t.event_type = bounded_string(*e, "eventType", lim);
    auto data = body.find("data");
    if (data == body.end()) throw bad_request("data is required");
    check_payload_depth(*data, "data", lim);
    if (json_holds_nul(*data)) throw bad_request("data must not contain \\u0000 (traces are stored as jsonb)");
    t.data = data->dump(-1, ' ', false, json::error_handler_t::strict);
    if (const json* names = present_field(body, "traceNames")) {
        std::vector<const json*> items;
        if (names->is_string()) {
            items.push_back(names);
        } else if (names->is_array()) {
            if (names->size() > max_trace_names)
                throw bad_request(fmt::format("traceNames may hold at most {} names", max_trace_names));
            for (const auto& n : *names) items.push_back(&n);
        } else {
            throw bad_request("traceNames must be an array of strings or a string");
        }
        std::set<std::string> seen;
        std::size_t i = 0;
        for (const json* n : items) {
            auto name = bounded_string(*n, names->is_array() ? fmt::format("traceNames[{}]", i) : "traceNames", lim);
            ++i;
            if (seen.insert(name).second) t.trace_names.push_back(std::move(name));
        }
    }
    return t;
}

trace_page parse_trace_page(const std::map<std::string, std::string>& q, std::int64_t default_limit) {
    trace_page p;
    p.limit = query_int(q, "limit", default_limit, 1, 1000);
    p.offset = query_int(q, "offset", 0, 0, 2147483647);
    return p;
}

}  // namespace queen::api
