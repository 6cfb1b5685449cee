// The /api/v1/analytics/* routes (docs/status-and-analytics.md): windows over the per-minute
// activity tables, grouped into the shapes Queen's dashboard reads.
#include "api/observability/handlers.hpp"
#include "api/observability/status_requests.hpp"
#include "api/shared/spool_push.hpp"
#include "api/shared/tenant_names.hpp"
#include "api/shared/validate.hpp"
#include "domain/message_id.hpp"
#include "http/responses.hpp"
#include "render/json_writer.hpp"
#include "render/record_writer.hpp"
#include "store/activity_store.hpp"
#include "util/wall_clock.hpp"

#include <utility>
#include <set>

namespace queen::api {

namespace asio = boost::asio;
using store::analytics_view;

namespace {

constexpr std::int64_t worker_window_us = 300'000'000;  // brokers seen in the last 5 minutes

struct analytics_request {
    store::status_window window;
    std::optional<std::string> filter;  // hostname or queue (its stored key)
    std::optional<std::string> scope;   // the caller's tenant scope (the views over queues)
};

// The window of docs/http-api.md, "Time windows and counts" and the route's one filter; a
// queue filter names the caller's tenant's queue.
analytics_request parse_analytics(const http::request_context& rc, const limits& lim, const char* filter_key) {
    analytics_request r;
    r.window = parse_status_window(rc.query, lim, std::chrono::hours(1), util::wall_clock_us());
    if (filter_key) r.filter = query_name(rc.query, filter_key, lim);
    if (r.filter && std::string_view(filter_key) == "queue") r.filter = queue_key(rc.tenant, *r.filter, "queue");
    r.scope = rc.tenant.sql_scope();
    return r;
}

asio::awaitable<db::record_set> rows(broker_context& ctx, analytics_view view, const analytics_request& r) {
    co_return co_await store::analytics_rows(ctx.pool, view, r.window.from_us, r.window.to_us, r.filter, r.scope);
}

asio::awaitable<int> bucket_minutes(broker_context& ctx, const analytics_request& r) {
    co_return co_await store::bucket_minutes(ctx.pool, r.window.from_us, r.window.to_us);
}

void write_time_range(render::json_writer& out, const analytics_request& r) {
    out.key("timeRange")
        .begin_object()
        .field("from", domain::iso_time(r.window.from_us))
        .field("to", domain::iso_time(r.window.to_us))
        .end_object();
}

// The value of a text column of a row ("" for NULL).
std::string text_at(const db::record_set& rs, std::size_t row, std::string_view column) {
    const auto& v = rs.rows[row][rs.column(column)];
    return v ? *v : std::string();
}

http::response json_ok(render::json_writer& out) {
    return http::json_text(http::bhttp::status::ok, out.take());
}

}  // namespace

// GET /api/v1/analytics/system-metrics: one replica per broker, its buckets oldest first.
asio::awaitable<http::response> handle_system_metrics(broker_context& ctx, http::request_context& rc) {
    const auto r = parse_analytics(rc, ctx.limits, "hostname");
    const auto series = co_await rows(ctx, analytics_view::system_metrics, r);
    const int minutes = co_await bucket_minutes(ctx, r);
    render::json_writer out;
    out.begin_object();
    write_time_range(out, r);
    out.key("replicas").begin_array();
    std::size_t replicas = 0;
    for (std::size_t i = 0; i < series.size();) {
        const auto host = text_at(series, i, "hostname"), port = text_at(series, i, "port");
        out.begin_object();
        for (const auto* column : {"hostname", "port", "workerId"}) render::write_member(out, series, i, column);
        out.key("timeSeries").begin_array();
        for (; i < series.size() && text_at(series, i, "hostname") == host && text_at(series, i, "port") == port; ++i) {
            out.begin_object();
            render::write_member(out, series, i, "timestamp");
            render::write_member(out, series, i, "sampleCount");
            out.key("metrics");
            render::write_record(out, series, i, "metrics.");
            out.end_object();
        }
        out.end_array().end_object();
        ++replicas;
    }
    out.end_array()
        .field("replicaCount", replicas)
        .field("bucketMinutes", minutes)
        .field("pointCount", series.size())
        .end_object();
    co_return json_ok(out);
}

// GET /api/v1/analytics/worker-metrics
asio::awaitable<http::response> handle_worker_metrics(broker_context& ctx, http::request_context& rc) {
    const auto r = parse_analytics(rc, ctx.limits, "hostname");
    const auto series = co_await rows(ctx, analytics_view::worker_series, r);
    const auto queues = co_await rows(ctx, analytics_view::worker_queues, r);
    const auto summary = co_await rows(ctx, analytics_view::worker_summary, r);
    const auto workers = co_await store::status_workers(ctx.pool, util::wall_clock_us() - worker_window_us);
    const int minutes = co_await bucket_minutes(ctx, r);
    render::json_writer out;
    out.begin_object();
    write_time_range(out, r);
    out.field("bucketMinutes", minutes).field("pointCount", series.size()).key("timeSeries");
    render::write_records(out, series);
    out.key("workers");
    render::write_records(out, workers);
    out.key("queues");
    render::write_records(out, queues);
    out.key("summary");
    render::write_record(out, summary, 0);
    out.end_object();
    co_return json_ok(out);
}

// GET /api/v1/analytics/queue-lag: a bare array, one row per (minute, queue).
asio::awaitable<http::response> handle_queue_lag(broker_context& ctx, http::request_context& rc) {
    const auto r = parse_analytics(rc, ctx.limits, "queue");
    const auto lag = co_await rows(ctx, analytics_view::queue_lag, r);
    render::json_writer out;
    render::write_records(out, lag);
    co_return json_ok(out);
}

// GET /api/v1/analytics/queue-ops
asio::awaitable<http::response> handle_queue_ops(broker_context& ctx, http::request_context& rc) {
    const auto r = parse_analytics(rc, ctx.limits, "queue");
    const auto series = co_await rows(ctx, analytics_view::queue_ops, r);
    std::set<std::string> names;
    for (std::size_t i = 0; i < series.size(); ++i) names.insert(text_at(series, i, "queueName"));
    const int minutes = co_await bucket_minutes(ctx, r);
    render::json_writer out;
    out.begin_object();
    write_time_range(out, r);
    out.field("bucketMinutes", minutes).key("series");
    render::write_records(out, series);
    out.key("queues").begin_array();
    for (const auto& n : names) out.value(n);
    out.end_array().end_object();
    co_return json_ok(out);
}

// GET /api/v1/analytics/queue-parked-replicas
asio::awaitable<http::response> handle_queue_parked_replicas(broker_context& ctx, http::request_context& rc) {
    const auto r = parse_analytics(rc, ctx.limits, "queue");
    const auto series = co_await rows(ctx, analytics_view::queue_parked, r);
    std::set<std::pair<std::string, std::string>> replicas;  // (hostname, port)
    for (std::size_t i = 0; i < series.size(); ++i)
        replicas.emplace(text_at(series, i, "hostname"), text_at(series, i, "port"));
    const int minutes = co_await bucket_minutes(ctx, r);
    render::json_writer out;
    out.begin_object();
    write_time_range(out, r);
    out.field("bucketMinutes", minutes).key("series");
    render::write_records(out, series);
    out.key("replicas").begin_array();
    for (const auto& [host, port] : replicas)
        out.begin_object().field("hostname", host).field("port", std::stoi(port)).field("workerId", 0).end_object();
    out.end_array().end_object();
    co_return json_ok(out);
}

// GET /api/v1/analytics/retention
asio::awaitable<http::response> handle_retention_analytics(broker_context& ctx, http::request_context& rc) {
    const auto r = parse_analytics(rc, ctx.limits, "queue");
    const auto series = co_await rows(ctx, analytics_view::retention, r);
    static constexpr const char* kinds[] = {"retentionMsgs", "completedRetentionMsgs", "evictionMsgs", "totalMsgs",
                                            "eventCount"};
    const int minutes = co_await bucket_minutes(ctx, r);
    render::json_writer out;
    out.begin_object();
    write_time_range(out, r);
    out.field("bucketMinutes", minutes).key("series");
    render::write_records(out, series);
    out.key("totals").begin_object();
    for (const auto* kind : kinds) {
        long long total = 0;
        for (std::size_t i = 0; i < series.size(); ++i) total += series.integer(i, kind);
        out.dynamic_key(kind).value(total);
    }
    out.end_object().end_object();
    co_return json_ok(out);
}

// GET /api/v1/analytics/postgres-stats
asio::awaitable<http::response> handle_postgres_stats(broker_context& ctx, http::request_context& rc) {
    // Statement texts carry other applications' literals: every application's for admin only.
    const auto s = co_await store::read_postgres_stats(ctx.pool, rc.caller_admin);
    const std::pair<std::string_view, const db::record_set*> lists[] = {
        {"tableCache", &s.tables},        {"indexCache", &s.indexes},           {"deadTuples", &s.dead_tuples},
        {"hotUpdates", &s.hot_updates},   {"activeQueries", &s.active_queries}, {"autovacuumStatus", &s.autovacuum},
        {"bufferUsage", &s.buffer_usage}, {"tableSizes", &s.table_sizes}};
    render::json_writer out;
    out.begin_object();
    // timestamp, database and the databaseCache, cacheSummary and bufferConfig objects.
    render::write_members(out, s.database, 0);
    for (const auto& [name, rows] : lists) {
        out.dynamic_key(name);
        render::write_records(out, *rows);
    }
    out.end_object();
    co_return json_ok(out);
}

}  // namespace queen::api
