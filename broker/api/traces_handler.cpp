// Trace routes (docs/traces.md): POST /api/v1/traces, GET /api/v1/traces/:partitionId/:transactionId,
// GET /api/v1/traces/by-name/:name, GET /api/v1/traces/names. The SQL is in
// sql/procedures/76_traces.sql.
#include "api/json_text.hpp"
#include "api/routes.hpp"
#include "api/trace_requests.hpp"
#include "core/message_id.hpp"
#include "db/pg_array.hpp"
#include "db/pg_binary.hpp"
#include "http/responses.hpp"
#include "segment/segment_codec.hpp"

namespace queen::api {

namespace asio = boost::asio;

namespace {

// Columns selected for one trace, starting at `c`:
//   trace_id, partition_id, transaction_id, consumer_group, event_type, data::text,
//   to_json(trace_names)::text, created_at
constexpr const char* trace_columns =
    "t.trace_id, t.partition_id, t.transaction_id, t.consumer_group, t.event_type, t.data::text, "
    "to_json(t.trace_names)::text, t.created_at";

void append_trace(std::string& out, const db::pg_result& res, int row, int c) {
    out += "{\"id\":";
    append_json_string(out, segment::uuid_to_string(db::uuid_bytes(res, row, c)));
    out += ",\"transactionId\":";
    append_json_string(out, res.text(row, c + 2));
    out += ",\"partitionId\":\"" + std::to_string(res.int64(row, c + 1)) + "\"";
    out += ",\"consumerGroup\":";
    append_json_string(out, res.text(row, c + 3));
    out += ",\"eventType\":";
    append_json_string(out, res.text(row, c + 4));
    out += ",\"data\":";
    out += res.text(row, c + 5);
    out += ",\"traceNames\":";
    out += res.text(row, c + 6);
    out += ",\"createdAt\":\"" + core::iso_time(db::timestamp_us(res, row, c + 7)) + "\"";
}

void append_opt_string(std::string& out, const db::pg_result& res, int row, int col) {
    if (res.is_null(row, col)) out += "null";
    else append_json_string(out, res.text(row, col));
}

}  // namespace

// POST /api/v1/traces
asio::awaitable<http::response> handle_trace_record(app::broker_context& ctx, http::request_context& rc) {
    auto body = parse_json_body(rc.req.body(), ctx.limits);
    const auto t = parse_trace(body, ctx.limits);
    const auto pid = parse_trace_partition_id(t.partition_id);
    if (!pid) throw api_error(error_code::not_found, "partition not found: " + t.partition_id);
    db::pg_array_builder names;
    for (const auto& n : t.trace_names) names.add(n);
    const std::string pid_text = std::to_string(*pid), names_text = names.finish();
    std::vector<db::pg_param> params{db::pg_param::text(pid_text),     db::pg_param::text(t.transaction_id),
                                     db::pg_param::text(t.consumer_group), db::pg_param::text(t.event_type),
                                     db::pg_param::text(t.data),       db::pg_param::text(names_text)};
    auto res = co_await ctx.pool.exec(
        "SELECT queen.record_trace($1::bigint, $2::text, $3::text, $4::text, $5::jsonb, $6::text[])", params,
        db::result_format::binary);
    if (res.rows() == 0 || res.is_null(0, 0))
        throw api_error(error_code::not_found, "partition not found: " + t.partition_id);
    std::string out = "{\"success\":true,\"traceId\":";
    append_json_string(out, segment::uuid_to_string(db::uuid_bytes(res, 0, 0)));
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
        const std::string pid_text = std::to_string(*pid);
        std::vector<db::pg_param> params{db::pg_param::text(pid_text), db::pg_param::text(transaction)};
        const std::string sql =
            std::string("SELECT ") + trace_columns + " FROM queen.message_traces_of($1::bigint, $2::text) t";
        auto res = co_await ctx.pool.exec(sql, params, db::result_format::binary);
        for (int row = 0; row < res.rows(); ++row) {
            if (row) out += ',';
            append_trace(out, res, row, 0);
            out += '}';
        }
    }
    out += "]}";
    co_return http::json_text(http::bhttp::status::ok, std::move(out));
}

// GET /api/v1/traces/by-name/:name?limit=100&offset=0
asio::awaitable<http::response> handle_traces_by_name(app::broker_context& ctx, http::request_context& rc) {
    const std::string& name = rc.path_params.at(0);
    if (name.empty() || name.size() > 255) throw bad_request("trace name must be 1..255 bytes");
    const auto page = parse_trace_page(rc.query, 100);
    const std::string limit = std::to_string(page.limit), offset = std::to_string(page.offset);
    std::vector<db::pg_param> params{db::pg_param::text(name), db::pg_param::text(limit), db::pg_param::text(offset)};
    const std::string sql = std::string("SELECT c.total, ") + trace_columns +
                            ", t.queue, t.partition FROM queen.count_traces_by_name($1::text) AS c(total) "
                            "LEFT JOIN LATERAL queen.traces_by_name($1::text, $2::integer, $3::integer) t ON true";
    auto res = co_await ctx.pool.exec(sql, params, db::result_format::binary);
    std::int64_t total = res.rows() > 0 ? res.int64(0, 0) : 0;
    std::string out = "{\"traceName\":";
    append_json_string(out, name);
    out += ",\"traces\":[";
    bool first = true;
    for (int row = 0; row < res.rows(); ++row) {
        if (res.is_null(row, 1)) continue;
        if (!first) out += ',';
        first = false;
        append_trace(out, res, row, 1);
        out += ",\"queue\":";
        append_opt_string(out, res, row, 9);
        out += ",\"partition\":";
        append_opt_string(out, res, row, 10);
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
    std::vector<db::pg_param> params{db::pg_param::text(limit), db::pg_param::text(offset)};
    auto res = co_await ctx.pool.exec(
        "SELECT c.total, n.trace_name, n.trace_count, n.message_count, n.last_seen "
        "FROM queen.count_trace_names() AS c(total) "
        "LEFT JOIN LATERAL queen.trace_names($1::integer, $2::integer) n ON true",
        params, db::result_format::binary);
    std::int64_t total = res.rows() > 0 ? res.int64(0, 0) : 0;
    std::string out = "{\"traceNames\":[";
    bool first = true;
    for (int row = 0; row < res.rows(); ++row) {
        if (res.is_null(row, 1)) continue;
        if (!first) out += ',';
        first = false;
        out += "{\"traceName\":";
        append_json_string(out, res.text(row, 1));
        out += ",\"traceCount\":" + std::to_string(res.int64(row, 2));
        out += ",\"messageCount\":" + std::to_string(res.int64(row, 3));
        out += ",\"lastSeen\":\"" + core::iso_time(db::timestamp_us(res, row, 4)) + "\"}";
    }
    out += "],\"total\":" + std::to_string(total) + ",\"pagination\":{\"limit\":" + limit + ",\"offset\":" + offset +
           "}}";
    co_return http::json_text(http::bhttp::status::ok, std::move(out));
}

}  // namespace queen::api
