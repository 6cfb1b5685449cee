// Trace routes (docs/traces.md): POST /api/v1/traces, GET /api/v1/traces/:partitionId/:transactionId,
// GET /api/v1/traces/by-name/:name, GET /api/v1/traces/names. The SQL is in
// sql/procedures/76_traces.sql, called through store/traces_store.
#include "api/admin/handlers.hpp"
#include "api/admin/trace_requests.hpp"
#include "api/shared/paging_answer.hpp"
#include "domain/message_id.hpp"
#include "http/responses.hpp"
#include "store/traces_store.hpp"

namespace queen::api {

namespace asio = boost::asio;

namespace {

// Writes the members every trace event has, into the open object: snake_case, as Queen's
// dashboard reads them (the contract), then the camelCase aliases queenctl reads.
void write_trace_members(render::json_writer& out, const store::trace& t) {
    const std::string created_at = domain::iso_time(t.created_at_us);
    out.field("id", t.trace_id)
        .field("transaction_id", t.transaction_id)
        .field("partition_id", std::to_string(t.partition_id))
        .field("event_type", t.event_type)
        .raw_field("data", t.data_json)
        .field("consumer_group", t.consumer_group)
        .field("worker_id", nullptr)
        .field("created_at", created_at)
        .raw_field("trace_names", t.trace_names_json)
        .field("transactionId", t.transaction_id)
        .field("eventType", t.event_type)
        .field("createdAt", created_at);
}

}  // namespace

// POST /api/v1/traces
asio::awaitable<http::response> handle_trace_record(broker_context& ctx, http::request_context& rc) {
    const auto document = parse_json_body(rc.req.body(), ctx.limits);
    const auto& body = document.value;
    const auto t = parse_trace(body, ctx.limits);
    const auto pid = parse_partition_id(t.partition_id);
    if (!pid) throw api_error(error_code::not_found, "partition not found: " + t.partition_id);
    const store::trace_record record{*pid, t.transaction_id, t.consumer_group, t.event_type, t.data, t.trace_names};
    const auto trace_id = co_await store::record_trace(ctx.pool, record, rc.tenant.sql_scope());
    if (!trace_id) throw api_error(error_code::not_found, "partition not found: " + t.partition_id);
    render::json_writer out;
    out.begin_object().field("success", true).field("traceId", *trace_id).end_object();
    co_return http::json_text(http::bhttp::status::created, out.take());
}

// GET /api/v1/traces/:partitionId/:transactionId
asio::awaitable<http::response> handle_message_traces(broker_context& ctx, http::request_context& rc) {
    const std::string& partition = rc.path_params.at(0);
    const std::string& transaction = rc.path_params.at(1);
    std::vector<store::trace> traces;
    if (const auto pid = parse_partition_id(partition))
        traces = co_await store::message_traces_of(ctx.pool, *pid, transaction, rc.tenant.sql_scope());
    render::json_writer out;
    out.begin_object().key("traces").begin_array();
    for (const auto& t : traces) {
        out.begin_object();
        write_trace_members(out, t);
        out.end_object();
    }
    out.end_array().end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

// GET /api/v1/traces/by-name/:name?limit=100&offset=0
asio::awaitable<http::response> handle_traces_by_name(broker_context& ctx, http::request_context& rc) {
    const std::string& name = rc.path_params.at(0);
    check_name("trace name", name, ctx.limits);
    const auto page = parse_trace_page(rc.query, 100);
    const auto found = co_await store::traces_by_name(ctx.pool, name, page.limit, page.offset, rc.tenant.sql_scope());
    render::json_writer out;
    out.begin_object().field("trace_name", name).key("traces").begin_array();
    for (const auto& t : found.traces) {
        out.begin_object();
        write_trace_members(out, t.event);
        // message_payload: null, the payload is not at hand without decoding its segment.
        std::optional<std::string_view> queue;
        if (t.queue) queue = rc.tenant.local(*t.queue);
        out.field("queue_name", queue)
            .field("partition_name", t.partition)
            .field("message_payload", nullptr)
            .field("partition", t.partition)
            .end_object();
    }
    out.end_array();
    write_paging(out, found.total, page.limit, page.offset);
    out.end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

// GET /api/v1/traces/names?limit=50&offset=0
asio::awaitable<http::response> handle_trace_names(broker_context& ctx, http::request_context& rc) {
    const auto page = parse_trace_page(rc.query, 50);
    const auto names = co_await store::trace_names(ctx.pool, page.limit, page.offset, rc.tenant.sql_scope());
    render::json_writer out;
    out.begin_object().key("trace_names").begin_array();
    for (const auto& n : names.names) {
        const std::string last_seen = domain::iso_time(n.last_seen_us);
        out.begin_object()
            .field("trace_name", n.name)
            .field("trace_count", n.trace_count)
            .field("message_count", n.message_count)
            .field("last_seen", last_seen)
            .field("name", n.name)
            .field("count", n.trace_count)
            .field("lastSeen", last_seen)
            .end_object();
    }
    out.end_array();
    write_paging(out, names.total, page.limit, page.offset);
    out.end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

}  // namespace queen::api
