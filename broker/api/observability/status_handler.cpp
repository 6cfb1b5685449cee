// The status routes (docs/status-and-analytics.md): windows over the per-minute activity
// tables, the stats snapshot, and one queue counted now.
#include "api/observability/handlers.hpp"
#include "api/observability/status_requests.hpp"
#include "api/shared/api_error.hpp"
#include "api/shared/spool_push.hpp"
#include "api/shared/tenant_names.hpp"
#include "api/shared/validate.hpp"
#include "domain/message_id.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"
#include "render/json_writer.hpp"
#include "render/record_writer.hpp"
#include "spool/spool_drainer.hpp"
#include "spool/spool_file.hpp"
#include "store/activity_store.hpp"
#include "store/queues_store.hpp"
#include "util/wall_clock.hpp"

#include <array>

namespace queen::api {

namespace asio = boost::asio;

namespace {

constexpr std::int64_t worker_window_us = 120'000'000;  // brokers seen in the last 2 minutes

http::response json_ok(render::json_writer& out) {
    return http::json_text(http::bhttp::status::ok, out.take());
}

// The window in the caller's tenant: its queue filter as a stored key, its scope.
store::status_window in_tenant(store::status_window w, const domain::tenant_scope& tenant) {
    if (w.queue) w.queue = queue_key(tenant, *w.queue, "queue");
    w.scope = tenant.sql_scope();
    return w;
}

}  // namespace

// GET /api/v1/status
asio::awaitable<http::response> handle_status(broker_context& ctx, http::request_context& rc) {
    const std::int64_t now = util::wall_clock_us();
    const auto w = in_tenant(parse_status_window(rc.query, ctx.limits, std::chrono::hours(1), now), rc.tenant);
    const auto summary = co_await store::status_summary(ctx.pool, w);
    const auto throughput = co_await store::status_throughput(ctx.pool, w);
    const auto queues = co_await store::status_queues(ctx.pool, w, 10000, 0, true);
    const auto top_errors = co_await store::status_top_errors(ctx.pool, w);
    // The brokers serve every tenant: a tenant's status lists none.
    db::record_set workers;
    if (!w.scope) workers = co_await store::status_workers(ctx.pool, now - worker_window_us);
    render::json_writer out;
    out.begin_object().key("timeRange");
    render::write_record(out, summary, 0, "timeRange.");
    render::write_member(out, summary, 0, "bucketMinutes");
    out.field("pointCount", throughput.size()).key("throughput");
    render::write_records(out, throughput);
    out.key("queues").begin_array();
    for (std::size_t r = 0; r < queues.size(); ++r) {
        out.begin_object();
        for (const auto* column : {"id", "name", "namespace", "task", "partitions", "totalConsumed"})
            render::write_member(out, queues, r, column);
        out.end_object();
    }
    out.end_array().key("messages");
    render::write_record(out, summary, 0, "messages.");
    out.key("leases");
    render::write_record(out, summary, 0, "leases.");
    out.key("deadLetterQueue").begin_object();
    render::write_members(out, summary, 0, "deadLetterQueue.");
    out.key("topErrors");
    render::write_records(out, top_errors);
    out.end_object().key("workers");
    render::write_records(out, workers);
    out.key("errors");
    render::write_record(out, summary, 0, "errors.");
    render::write_member(out, summary, 0, "statsAge");
    out.end_object();
    co_return json_ok(out);
}

// GET /api/v1/status/queues
asio::awaitable<http::response> handle_status_queues(broker_context& ctx, http::request_context& rc) {
    store::status_window w;
    w.queue = query_name(rc.query, "queue", ctx.limits);
    w.namespace_name = query_name(rc.query, "namespace", ctx.limits);
    w.task = query_name(rc.query, "task", ctx.limits);
    w = in_tenant(std::move(w), rc.tenant);
    const auto limit = query_int(rc.query, "limit", 100, 0, 10000);
    const auto offset = query_int(rc.query, "offset", 0, 0, 2147483647);
    const auto queues = co_await store::status_queues(ctx.pool, w, limit, offset, false);
    render::json_writer out;
    out.begin_object().key("queues").begin_array();
    for (std::size_t r = 0; r < queues.size(); ++r) {
        out.begin_object();
        for (const auto* column : {"id", "name", "namespace", "task", "createdAt", "partitions"})
            render::write_member(out, queues, r, column);
        out.key("messages");
        render::write_record(out, queues, r, "messages.");
        out.end_object();
    }
    out.end_array().key("pagination").begin_object().field("limit", limit).field("offset", offset).end_object();
    out.end_object();
    co_return json_ok(out);
}

// GET /api/v1/status/queues/:queue
asio::awaitable<http::response> handle_status_queue(broker_context& ctx, http::request_context& rc) {
    const std::string& name = rc.path_params.at(0);
    check_name("queue", name, ctx.limits);
    const std::string key = queue_key(rc.tenant, name, "queue");
    const auto queue = co_await store::status_queue(ctx.pool, key, rc.tenant.sql_scope());
    if (queue.size() == 0) throw api_error(error_code::not_found, "Queue not found");
    const auto partitions = co_await store::status_queue_partitions(ctx.pool, key);
    static constexpr std::array<const char*, 6> counts{"total",     "pending", "processing",
                                                       "completed", "failed",  "deadLetter"};
    std::array<long long, 6> totals{};
    for (std::size_t r = 0; r < partitions.size(); ++r)
        for (std::size_t i = 0; i < counts.size(); ++i)
            totals[i] += partitions.integer(r, std::string("messages.") + counts[i]);
    render::json_writer out;
    out.begin_object().key("queue");
    render::write_record(out, queue, 0);
    out.key("partitions");
    render::write_records(out, partitions);
    out.key("totals").begin_object().key("messages").begin_object();
    for (std::size_t i = 0; i < counts.size(); ++i) out.dynamic_key(counts[i]).value(totals[i]);
    out.end_object();
    for (std::size_t i = 0; i < counts.size(); ++i) out.dynamic_key(counts[i]).value(totals[i]);
    out.end_object().end_object();
    co_return json_ok(out);
}

// GET /api/v1/status/analytics
asio::awaitable<http::response> handle_status_analytics(broker_context& ctx, http::request_context& rc) {
    const auto req = parse_status_analytics(rc.query, ctx.limits, util::wall_clock_us());
    const auto points =
        co_await store::status_analytics(ctx.pool, in_tenant(req.window, rc.tenant), interval_name(req.interval));
    render::json_writer out;
    out.begin_object().key("dataPoints");
    render::write_records(out, points);
    out.field("interval", interval_name(req.interval))
        .field("from", domain::iso_time(req.window.from_us))
        .field("to", domain::iso_time(req.window.to_us))
        .end_object();
    co_return json_ok(out);
}

// GET /api/v1/resources/overview
asio::awaitable<http::response> handle_resources_overview(broker_context& ctx, http::request_context& rc) {
    const auto overview = co_await store::resources_overview(ctx.pool, rc.tenant.sql_scope());
    render::json_writer out;
    render::write_record(out, overview, 0);
    co_return json_ok(out);
}

// GET /api/v1/status/buffers: the spool. failed counts the records kept after the drain's
// last attempt failed (the spool never drops a record: they are written once it succeeds).
asio::awaitable<http::response> handle_status_buffers(broker_context& ctx, http::request_context&) {
    bool healthy = true;
    try {
        co_await store::probe_database(ctx.pool);
    } catch (const std::exception& e) {
        log::warn("status/buffers: database not reachable: {}", e.what());
        healthy = false;
    }
    const auto spool = ctx.spool.status();
    const auto drain = ctx.drainer.status();
    render::json_writer out;
    out.begin_object()
        .field("pending", spool.pending)
        .field("failed", drain.last_error.empty() ? std::uint64_t{0} : spool.pending)
        .field("dbHealthy", healthy)
        .field("worker", 0)
        .field("spoolBytes", spool.bytes)
        .end_object();
    co_return json_ok(out);
}

}  // namespace queen::api
