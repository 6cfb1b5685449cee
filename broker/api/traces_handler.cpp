// Trace routes (docs/traces.md): POST /api/v1/traces, GET /api/v1/traces/:partitionId/:transactionId,
// GET /api/v1/traces/by-name/:name, GET /api/v1/traces/names. The SQL is in
// sql/procedures/76_traces.sql, called through store/traces_store.
#include "api/json_text.hpp"
#include "api/routes.hpp"
#include "api/trace_requests.hpp"
#include "core/message_id.hpp"
#include "http/responses.hpp"
#include "store/traces_store.hpp"

namespace queen::api {

namespace asio = boost::asio;

namespace {

void append_trace(std::string& out, const store::trace& t) {
    out += "{\"id\":";
    append_json_string(out, t.trace_id);
    out += ",\"transactionId\":";
    append_json_string(out, t.transaction_id);
    out += ",\"partitionId\":\"" + std::to_string(t.partition_id) + "\"";
    out += ",\"consumerGroup\":";
    append_json_string(out, t.consumer_group);
    out += ",\"eventType\":";
    append_json_string(out, t.event_type);
    out += ",\"data\":";
    out += t.data_json;
    out += ",\"traceNames\":";
    out += t.trace_names_json;
    out += ",\"createdAt\":\"" + core::iso_time(t.created_at_us) + "\"";
}

void append_opt_string(std::string& out, const std::optional<std::string>& value) {
    if (!value) out += "null";
    else append_json_string(out, *value);
}

}  // namespace

// POST /api/v1/traces
asio::awaitable<http::response> handle_trace_record(app::broker_context& ctx, http::request_context& rc) {
    auto body = parse_json_body(rc.req.body(), ctx.limits);
    const auto t = parse_trace(body, ctx.limits);
    const auto pid = parse_trace_partition_id(t.partition_id);
    if (!pid) throw api_error(error_code::not_found, "partition not found: " + t.partition_id);
    const store::trace_record record{*pid, t.transaction_id, t.consumer_group, t.event_type, t.data, t.trace_names};
    const auto trace_id = co_await store::record_trace(ctx.pool, record);
    if (!trace_id) throw api_error(error_code::not_found, "partition not found: " + t.partition_id);
    std::string out = "{\"success\":true,\"traceId\":";
    append_json_string(out, *trace_id);
    out += '}';
    co_return http::json_text(http::bhttp::status::created, std::move(out));
}

// GET /api/v1/traces/:partitionId/:transactionId
asio::awaitable<http::response> handle_message_traces(app::broker_context& ctx, http::request_context& rc) {
    const std::string& partition = rc.path_params.at(0);
    const std::string& transaction = rc.path_params.at(1);
    std::string out = "{\"traces\":[";
    const auto pid = parse_trace_partition_id(partition);
    if (pid) {
        const auto traces = co_await store::message_traces_of(ctx.pool, *pid, transaction);
        for (std::size_t row = 0; row < traces.size(); ++row) {
            if (row) out += ',';
            append_trace(out, traces[row]);
            out += '}';
        }
    }
    out += "]}";
    co_return http::json_text(http::bhttp::status::ok, std::move(out));
}

// GET /api/v1/traces/by-name/:name?limit=100&offset=0
asio::awaitable<http::response> handle_traces_by_name(app::broker_context& ctx, http::request_context& rc) {
    const std::string& name = rc.path_params.at(0);
    check_name("trace name", name, ctx.limits);
    const auto page = parse_trace_page(rc.query, 100);
    const std::string limit = std::to_string(page.limit), offset = std::to_string(page.offset);
    const auto found = co_await store::traces_by_name(ctx.pool, name, page.limit, page.offset);
    std::int64_t total = found.total;
    std::string out = "{\"traceName\":";
    append_json_string(out, name);
    out += ",\"traces\":[";
    bool first = true;
    for (const auto& t : found.traces) {
        if (!first) out += ',';
        first = false;
        append_trace(out, t.event);
        out += ",\"queue\":";
        append_opt_string(out, t.queue);
        out += ",\"partition\":";
        append_opt_string(out, t.partition);
        out += '}';
    }
    out += "],\"total\":" + std::to_string(total) + ",\"pagination\":{\"limit\":" + limit + ",\"offset\":" + offset +
           "}}";
    co_return http::json_text(http::bhttp::status::ok, std::move(out));
}

// GET /api/v1/traces/names?limit=50&offset=0
asio::awaitable<http::response> handle_trace_names(app::broker_context& ctx, http::request_context& rc) {
    const auto page = parse_trace_page(rc.query, 50);
    const std::string limit = std::to_string(page.limit), offset = std::to_string(page.offset);
    const auto names = co_await store::trace_names(ctx.pool, page.limit, page.offset);
    std::int64_t total = names.total;
    std::string out = "{\"traceNames\":[";
    bool first = true;
    for (const auto& n : names.names) {
        if (!first) out += ',';
        first = false;
        out += "{\"traceName\":";
        append_json_string(out, n.name);
        out += ",\"traceCount\":" + std::to_string(n.trace_count);
        out += ",\"messageCount\":" + std::to_string(n.message_count);
        out += ",\"lastSeen\":\"" + core::iso_time(n.last_seen_us) + "\"}";
    }
    out += "],\"total\":" + std::to_string(total) + ",\"pagination\":{\"limit\":" + limit + ",\"offset\":" + offset +
           "}}";
    co_return http::json_text(http::bhttp::status::ok, std::move(out));
}

}  // namespace queen::api
