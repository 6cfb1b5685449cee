#include "api/shared/requests.hpp"

#include "api/shared/json_guard.hpp"

#include "domain/message_id.hpp"
#include "segment/segment_codec.hpp"
#include "util/wall_clock.hpp"

#include <fmt/core.h>

#include <array>
#include <charconv>
#include <chrono>
#include <random>

namespace queen::api {

using nlohmann::json;

namespace {

std::optional<std::string> optional_string(const json& obj, const char* key, const std::string& where) {
    const json* v = present_field(obj, key);
    if (!v) return std::nullopt;
    if (!v->is_string()) throw bad_request(fmt::format("{}{} must be a string", where, key));
    std::string s = v->get<std::string>();
    check_no_nul(where + key, s);
    return s;
}

}  // namespace

json_document parse_json_body(std::string_view body, const limits& lim) {
    json_document doc;
    doc.budget_share = admit_json_body(body, lim, 1, json_value_cost_bytes);
    try {
        doc.value = json::parse(body);
        return doc;
    } catch (const json::parse_error& e) {
        refuse_malformed_json(e.byte, false);
    } catch (const json::out_of_range&) {
        refuse_malformed_json(std::nullopt, true);
    }
}

std::string generate_uuid_v7() {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    const auto ms = static_cast<std::uint64_t>(util::wall_clock_us() / 1000);
    std::array<std::uint8_t, 16> b{};
    for (int i = 0; i < 6; ++i) b[i] = static_cast<std::uint8_t>(ms >> (8 * (5 - i)));
    std::uint64_t r1 = rng(), r2 = rng();
    for (int i = 6; i < 16; ++i) b[i] = static_cast<std::uint8_t>((i < 11 ? r1 : r2) >> (8 * (i % 8)));
    b[6] = static_cast<std::uint8_t>(0x70 | (b[6] & 0x0f));
    b[8] = static_cast<std::uint8_t>(0x80 | (b[8] & 0x3f));
    return segment::uuid_to_string(b);
}

void stamp_producer(std::vector<domain::push_item>& items, const std::optional<std::string>& subject) {
    if (subject && subject->size() > QSEG_MAX_PRODUCER)
        throw bad_request(fmt::format("the token's sub is {} bytes; a message's producerSub holds at most {}",
                                      subject->size(), QSEG_MAX_PRODUCER));
    for (auto& item : items) item.producer_sub = subject;
}

const char* to_sql(ack_status s) {
    switch (s) {
        case ack_status::completed:
            return "completed";
        case ack_status::failed:
            return "failed";
        case ack_status::retry:
            return "retry";
        case ack_status::dlq:
            return "dlq";
    }
    return "completed";
}

namespace {

std::string group_of(const json& obj, const std::string& where, const std::string& fallback, const limits& lim) {
    auto g = optional_string(obj, "consumerGroup", where);
    if (!g || g->empty()) return fallback;
    check_name(where + "consumerGroup", *g, lim);
    return *g;
}

ack_item parse_ack_object(const json& obj, const std::string& where, const std::string& default_group,
                          const limits& lim) {
    if (!obj.is_object())
        throw bad_request((where.empty() ? std::string("body") : where.substr(0, where.size() - 1)) +
                          " must be a JSON object");
    ack_item a;
    auto tx = optional_string(obj, "transactionId", where);
    if (!tx) tx = optional_string(obj, "id", where);
    if (!tx || tx->empty()) throw bad_request(where + "transactionId is required");
    a.transaction_id = std::move(*tx);
    auto pid = optional_string(obj, "partitionId", where);
    if (!pid || pid->empty()) throw bad_request(where + "partitionId is required");
    a.partition_id = std::move(*pid);
    if (auto st = optional_string(obj, "status", where)) {
        if (*st == "completed" || *st == "success")
            a.status = ack_status::completed;
        else if (*st == "failed")
            a.status = ack_status::failed;
        else if (*st == "retry")
            a.status = ack_status::retry;
        else if (*st == "dlq")
            a.status = ack_status::dlq;
        else
            throw bad_request(
                fmt::format("{}status '{}' is unknown; use completed, success, failed, retry or dlq", where, *st));
    }
    a.error = optional_string(obj, "error", where);
    a.lease_id = optional_string(obj, "leaseId", where);
    if (const json* off = present_field(obj, "offset")) {
        if (!off->is_number_integer() || off->get<std::int64_t>() < 1)
            throw bad_request(where + "offset must be a positive integer");
        a.offset = off->get<std::int64_t>();
    }
    a.consumer_group = group_of(obj, where, default_group, lim);
    return a;
}

}  // namespace

ack_item parse_ack(const json& body, const limits& lim) {
    return parse_ack_object(body, "", queue_mode_group, lim);
}

std::vector<ack_item> parse_ack_batch(const json& body, const limits& lim) {
    if (!body.is_object()) throw bad_request("request body must be a JSON object with an acknowledgments array");
    const std::string group = group_of(body, "", queue_mode_group, lim);
    auto it = body.find("acknowledgments");
    if (it == body.end() || it->is_null()) throw bad_request("acknowledgments is required and must be an array");
    if (!it->is_array()) throw bad_request("acknowledgments must be an array");
    if (it->size() > lim.max_push_items)
        throw api_error(error_code::payload_too_large,
                        fmt::format("an ack batch may carry at most {} acknowledgments", lim.max_push_items));
    std::vector<ack_item> out;
    std::size_t i = 0;
    for (const json& a : *it) out.push_back(parse_ack_object(a, fmt::format("acknowledgments[{}].", i++), group, lim));
    return out;
}

bool query_bool(const std::string& value) {
    return value == "true" || value == "1";
}

pop_params parse_pop(const std::string& queue, const std::optional<std::string>& partition,
                     const std::map<std::string, std::string>& q, const limits& lim, bool from_beginning_by_default) {
    pop_params p;
    check_name("queue", queue, lim);
    p.queue = queue;
    if (partition) {
        check_name("partition", *partition, lim);
        p.partition = partition;
    }
    p.batch = query_int(q, "batch", 1, 1, static_cast<std::int64_t>(lim.max_pop_batch));
    p.partitions = query_int(q, "partitions", 1, 1, 10000);
    p.timeout_ms = query_int(q, "timeout", 30000, 0, 3600 * 1000);
    if (auto it = q.find("wait"); it != q.end()) p.wait = query_bool(it->second);
    // commitOnDelivery is newer Queen clients' name for autoAck: one parameter, two names.
    const auto auto_ack = q.find("autoAck");
    const auto commit_on_delivery = q.find("commitOnDelivery");
    if (auto_ack != q.end() && commit_on_delivery != q.end() &&
        query_bool(auto_ack->second) != query_bool(commit_on_delivery->second))
        throw bad_request("autoAck and commitOnDelivery name the same parameter and must agree, got autoAck=" +
                          auto_ack->second + " and commitOnDelivery=" + commit_on_delivery->second);
    if (auto_ack != q.end())
        p.auto_ack = query_bool(auto_ack->second);
    else if (commit_on_delivery != q.end())
        p.auto_ack = query_bool(commit_on_delivery->second);
    if (auto it = q.find("consumerGroup"); it != q.end() && !it->second.empty() && it->second != "null") {
        check_name("consumerGroup", it->second, lim);
        p.consumer_group = it->second;
    }
    if (p.consumer_group != queue_mode_group) {
        auto mode = q.find("subscriptionMode");
        if (mode == q.end() || mode->second.empty())
            p.subscribe_all = from_beginning_by_default;
        else if (mode->second == "new" || mode->second == "new-only")
            p.subscribe_all = false;
        auto from = q.find("subscriptionFrom");
        if (from != q.end() && !from->second.empty() && from->second != "null") {
            if (from->second == "now") {
                p.subscribe_all = false;
                p.subscription_at.reset();
            } else {
                auto t = domain::parse_iso_time(from->second);
                if (!t)
                    throw bad_request("subscriptionFrom must be 'now' or an ISO-8601 time stamp, got '" + from->second +
                                      "'");
                p.subscribe_all = false;
                p.subscription_at = *t;
            }
        }
    }
    return p;
}

namespace {

struct option_spec {
    const char* name;
    bool boolean;
    std::int64_t min;
    std::int64_t max;
};

// The options of configure (docs/http-api.md) with their types and ranges; defaults live in the
// schema (sql/migrations/0001_queues.sql).
constexpr option_spec option_specs[] = {
    {"leaseTime", false, 1, 7 * 86400},
    {"retryLimit", false, 0, 1000000},
    {"retryDelay", false, 0, 86400 * 1000},
    {"priority", false, -1000000, 1000000},
    {"delayedProcessing", false, 0, 365 * 86400},
    {"windowBuffer", false, 0, 365 * 86400},
    {"maxSize", false, 0, 1LL << 50},
    {"ttl", false, 0, 2147483647},
    {"retentionEnabled", true, 0, 0},
    {"retentionSeconds", false, 0, 2147483647},
    {"completedRetentionSeconds", false, 0, 2147483647},
    {"maxWaitTimeSeconds", false, 0, 2147483647},
    {"deadLetterQueue", true, 0, 0},
    {"dlqAfterMaxRetries", true, 0, 0},
    {"encryptionEnabled", true, 0, 0},
    {"dedupWindowSeconds", false, 0, 2147483647},
};

}  // namespace

configure_request parse_configure(const json& body, const limits& lim) {
    if (!body.is_object()) throw bad_request("request body must be a JSON object");
    configure_request r;
    const json* queue = present_field(body, "queue");
    if (!queue) throw bad_request("queue is required");
    if (!queue->is_string()) throw bad_request("queue must be a string");
    r.queue = queue->get<std::string>();
    if (r.queue.size() > lim.max_name_bytes)
        throw bad_request(fmt::format("queue is {} bytes long; the limit is {}", r.queue.size(), lim.max_name_bytes));
    if (r.queue.find('\0') != std::string::npos) throw bad_request("queue must not contain NUL characters");
    r.namespace_name = optional_string(body, "namespace", "");
    r.task = optional_string(body, "task", "");
    const json* options = present_field(body, "options");
    if (options) {
        if (!options->is_object()) throw bad_request("options must be an object");
        for (const auto& spec : option_specs) {
            const json* v = present_field(*options, spec.name);
            if (!v) continue;
            if (spec.boolean) {
                if (!v->is_boolean()) throw bad_request(fmt::format("options.{} must be a boolean", spec.name));
                r.options[spec.name] = v->get<bool>();
                continue;
            }
            const std::int64_t n = json_integer(*v, fmt::format("options.{}", spec.name), spec.min, spec.max);
            r.options[spec.name] = n;
        }
    }
    return r;
}

}  // namespace queen::api
