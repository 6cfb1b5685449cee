#include "api/shared/group_requests.hpp"

#include "domain/message_id.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace queen::api {

using nlohmann::json;

namespace {

// The body as a JSON object; an empty body or `null` is an empty object.
json_document object_body(std::string_view body, const limits& lim) {
    bool blank = true;
    for (char c : body)
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') blank = false;
    if (blank) return json_document{json::object(), {}};
    auto document = parse_json_body(body, lim);
    if (document.value.is_null()) document.value = json::object();
    if (!document.value.is_object()) throw bad_request("request body must be a JSON object");
    return document;
}

std::int64_t iso_field(const json& obj, const char* key) {
    const json* v = present_field(obj, key);
    if (!v) throw bad_request(fmt::format("{} is required (an ISO-8601 time stamp)", key));
    if (!v->is_string()) throw bad_request(fmt::format("{} must be an ISO-8601 time stamp string", key));
    const std::string text = v->get<std::string>();
    auto t = domain::parse_iso_time(text);
    if (!t) throw bad_request(fmt::format("{} must be an ISO-8601 time stamp, got '{}'", key, text));
    return *t;
}

}  // namespace

std::int64_t parse_extend_seconds(std::string_view body, const limits& lim) {
    const auto document = object_body(body, lim);
    const json& j = document.value;
    const json* v = present_field(j, "seconds");
    if (!v) return default_extend_seconds;
    const std::int64_t n = json_integer(*v, "seconds", 1, max_extend_seconds);
    return n;
}

seek_request parse_seek(std::string_view body, const limits& lim) {
    const auto document = object_body(body, lim);
    const json& j = document.value;
    seek_request r;
    if (const json* v = present_field(j, "toEnd")) {
        if (!v->is_boolean()) throw bad_request("toEnd must be a boolean");
        r.to_end = v->get<bool>();
    }
    const bool has_time = present_field(j, "timestamp") != nullptr;
    if (r.to_end && has_time) throw bad_request("give either toEnd:true or timestamp, not both");
    if (!r.to_end && !has_time) throw bad_request("give toEnd:true or a timestamp (ISO-8601) to seek to");
    if (has_time) r.timestamp_us = iso_field(j, "timestamp");
    return r;
}

std::int64_t parse_subscription(std::string_view body, const limits& lim) {
    const auto document = object_body(body, lim);
    const json& j = document.value;
    // Queen's wording, which its tools show.
    if (!present_field(j, "subscriptionTimestamp")) throw bad_request("Missing subscriptionTimestamp in request body");
    return iso_field(j, "subscriptionTimestamp");
}

void check_group_name(const std::string& group, const limits& lim) {
    check_name("consumer group", group, lim);
}

}  // namespace queen::api
