#include "api/admin/dlq_requests.hpp"

#include "domain/message_id.hpp"

#include <fmt/core.h>

#include <charconv>

namespace queen::api {

using nlohmann::json;

namespace {

// A query value, with "" treated as absent.
std::optional<std::string> value_of(const std::map<std::string, std::string>& q, const char* key) {
    auto it = q.find(key);
    if (it == q.end() || it->second.empty()) return std::nullopt;
    return it->second;
}

constexpr const char* filter_keys[] = {"queue", "consumerGroup", "partition", "from", "to", "id", "all", "limit"};

void refuse_empty(const dlq_filter& f, const char* what) {
    if (f.empty() && !f.all)
        throw bad_request(
            fmt::format("refusing to {} every dead letter without a filter; give queue, consumerGroup, "
                        "partition, from, to or id, or all=true to mean every dead letter",
                        what));
}

}  // namespace

dlq_filter parse_dlq_filter(const std::map<std::string, std::string>& q, const limits& lim) {
    dlq_filter f;
    if (auto v = value_of(q, "queue")) {
        check_name("queue", *v, lim);
        f.queue = std::move(*v);
    }
    if (auto v = value_of(q, "consumerGroup"); v && *v != "null") {
        check_name("consumerGroup", *v, lim);
        f.consumer_group = std::move(*v);
    }
    if (auto v = value_of(q, "partition")) {
        check_name("partition", *v, lim);
        f.partition = std::move(*v);
    }
    f.from_us = query_time(q, "from");
    f.to_us = query_time(q, "to");
    if (f.from_us && f.to_us && *f.from_us > *f.to_us) throw bad_request("from must not be after to");
    if (auto v = value_of(q, "id")) {
        auto id = domain::parse_message_id(*v);
        if (!id) throw bad_request(fmt::format("id must be a message id, got '{}'", *v));
        f.message_id = domain::message_id(id->first, id->second);
    }
    if (auto v = value_of(q, "all")) f.all = query_bool(*v);
    return f;
}

dlq_page parse_dlq_page(const std::map<std::string, std::string>& q) {
    dlq_page p;
    p.limit = query_int(q, "limit", 100, 1, 1000);
    p.offset = query_int(q, "offset", 0, 0, 2147483647);
    return p;
}

dlq_requeue_request parse_dlq_requeue(const std::map<std::string, std::string>& query, std::string_view body,
                                      const limits& lim) {
    std::map<std::string, std::string> merged = query;
    bool has_body = body.find_first_not_of(" \t\r\n") != std::string_view::npos;
    if (has_body) {
        const auto document = parse_json_body(body, lim);
        const json& b = document.value;
        if (!b.is_object()) throw bad_request("request body must be a JSON object");
        for (const char* key : filter_keys) {
            auto it = b.find(key);
            if (it == b.end() || it->is_null()) continue;
            std::string text;
            if (std::string_view(key) == "all") {
                if (!it->is_boolean()) throw bad_request("all must be a boolean");
                text = it->get<bool>() ? "true" : "false";
            } else if (std::string_view(key) == "limit") {
                text = std::to_string(json_integer(*it, "limit", 1, 1000));
            } else {
                if (!it->is_string()) throw bad_request(fmt::format("{} must be a string", key));
                text = it->get<std::string>();
                check_no_nul(key, text);
            }
            auto q = query.find(key);
            if (q != query.end() && !q->second.empty())
                throw bad_request(fmt::format("{} is given both in the query string and in the body", key));
            merged[key] = std::move(text);
        }
    }
    dlq_requeue_request r;
    r.filter = parse_dlq_filter(merged, lim);
    const auto max = static_cast<std::int64_t>(lim.max_push_items);
    r.limit = query_int(merged, "limit", max, 1, max);
    refuse_empty(r.filter, "requeue");
    return r;
}

dlq_filter parse_dlq_purge(const std::map<std::string, std::string>& query, const limits& lim) {
    auto f = parse_dlq_filter(query, lim);
    refuse_empty(f, "purge");
    return f;
}

}  // namespace queen::api
