// GET /metrics (JSON) and GET /metrics/prometheus (docs/metrics.md).
#include "api/observability/handlers.hpp"
#include "db/pg_listener.hpp"
#include "http/responses.hpp"
#include "maintenance/maintenance_flags.hpp"
#include "metrics/exposition.hpp"
#include "metrics/scrape_cache.hpp"
#include "render/json_writer.hpp"
#include "spool/spool_drainer.hpp"
#include "spool/spool_file.hpp"

namespace queen::api {

namespace {

double uptime_seconds(const broker_context& ctx) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - ctx.started_at).count();
}

}  // namespace

// GET /metrics: uptime, requests and pushed messages since start with their rate over the last
// minute, the pool, RSS and CPU time; reads nothing from the database.
boost::asio::awaitable<http::response> handle_metrics(broker_context& ctx, http::request_context&) {
    const auto usage = metrics::read_process_usage();
    const auto pool = ctx.pool.stats();
    render::json_writer out;
    out.begin_object().field("uptime", static_cast<std::int64_t>(uptime_seconds(ctx)));
    out.key("requests")
        .begin_object()
        .field("total", ctx.prometheus.http_requests_total())
        .field("rate", ctx.prometheus.http_requests_rate())
        .end_object();
    out.key("messages")
        .begin_object()
        .field("total", ctx.prometheus.published_total())
        .field("rate", ctx.prometheus.published_rate())
        .end_object();
    out.key("database")
        .begin_object()
        .field("poolSize", pool.size)
        .field("idleConnections", pool.idle)
        .field("waitingRequests", pool.waiting)
        .end_object();
    // heap*, external and arrayBuffers describe a JavaScript heap, which this broker has not.
    out.key("memory")
        .begin_object()
        .field("rss", static_cast<std::int64_t>(usage.resident_bytes))
        .field("heapTotal", 0)
        .field("heapUsed", 0)
        .field("external", 0)
        .field("arrayBuffers", 0)
        .end_object();
    out.key("cpu")
        .begin_object()
        .field("user", static_cast<std::int64_t>(usage.cpu_user_seconds * 1e6))
        .field("system", static_cast<std::int64_t>(usage.cpu_system_seconds * 1e6))
        .end_object();
    out.end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

// GET /metrics/prometheus: always 200; the database's families are left out while it does not answer.
boost::asio::awaitable<http::response> handle_metrics_prometheus(broker_context& ctx, http::request_context&) {
    auto cached = co_await ctx.scrape.get();
    const auto pool = ctx.pool.stats();
    const auto spool = ctx.spool.status();
    const auto drainer = ctx.drainer.status();
    metrics::scrape_state state;
    state.uptime_seconds = uptime_seconds(ctx);
    state.process = metrics::read_process_usage();
    state.pool_size = pool.size;
    state.pool_idle = pool.idle;
    state.pool_active = pool.open - std::min(pool.open, pool.idle);
    state.pool_waiting = pool.waiting;
    state.maintenance_push = ctx.maintenance.push_paused();
    state.maintenance_pop = ctx.maintenance.pop_paused();
    state.spool_pending = spool.pending;
    state.spool_bytes = spool.bytes;
    state.spool_drained = drainer.drained_total;
    state.spool_drain_failures = drainer.failed_batches;
    state.parked_by_queue = ctx.waiters.counts_by_queue();
    state.listen_connected = ctx.listener.connected();
    state.notifications_sent = ctx.notifier.sent();
    state.notifications_received = ctx.notifier.received();
    state.database = std::move(cached.rows);
    state.database_healthy = cached.healthy;
    if (!ctx.config.tenancy_header.empty()) state.tenancy_default = ctx.config.tenancy_default;
    http::response res{http::bhttp::status::ok, 11};
    res.set(http::bhttp::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    res.set(http::bhttp::field::cache_control, "no-cache");
    res.body() = metrics::render_exposition(ctx.prometheus, state);
    res.prepare_payload();
    co_return res;
}

}  // namespace queen::api
