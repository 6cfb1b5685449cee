// GET|POST /api/v1/system/maintenance and /api/v1/system/maintenance/pop.
#include "api/admin/handlers.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"
#include "maintenance/maintenance_flags.hpp"
#include "render/json_writer.hpp"
#include "spool/spool_drainer.hpp"
#include "spool/spool_file.hpp"

#include <chrono>

namespace queen::api {

namespace {

// The maintenance answer: the cached flags and this broker's spool. Problems are named, not
// quoted: their details (paths, libpq's text) are in the log.
std::string maintenance_status(const broker_context& ctx) {
    const auto s = ctx.spool.status();
    const auto d = ctx.drainer.status();
    const auto named = [](bool problem, const char* name) {
        return problem ? std::optional<std::string>(name) : std::nullopt;
    };
    render::json_writer out;
    out.begin_object()
        .field("maintenanceMode", ctx.maintenance.push_paused())
        .field("popMaintenanceMode", ctx.maintenance.pop_paused())
        .field("bufferedMessages", s.pending)
        .field("bufferHealthy", s.healthy)
        .key("bufferStats")
        .begin_object()
        .field("spoolFile", s.path)
        .field("spoolBytes", s.bytes)
        .field("problem", named(!s.problem.empty(), "the spool cannot be written (see the broker log)"))
        .field("draining", d.draining)
        .field("drainedTotal", d.drained_total)
        .field("lastDrainError", named(!d.last_error.empty(), "the last drain attempt failed (see the broker log)"))
        .end_object()
        .end_object();
    return out.take();
}

bool parse_enabled(const http::request_context& rc, const limits& lim) {
    const auto document = parse_json_body(rc.req.body(), lim);
    const auto& body = document.value;
    if (!body.is_object() || !body.contains("enabled") || !body["enabled"].is_boolean())
        throw bad_request("body must be {\"enabled\": true|false}: enabled must be a boolean");
    return body["enabled"].get<bool>();
}

}  // namespace

// GET /api/v1/system/maintenance and /api/v1/system/maintenance/pop: the cached flags
// (answered also while the database is unreachable) and this broker's spool.
boost::asio::awaitable<http::response> handle_get_maintenance(broker_context& ctx, http::request_context&) {
    co_return http::json_text(http::bhttp::status::ok, maintenance_status(ctx));
}

// POST /api/v1/system/maintenance {enabled}: push maintenance for every broker.
boost::asio::awaitable<http::response> handle_set_maintenance(broker_context& ctx, http::request_context& rc) {
    const bool enabled = parse_enabled(rc, ctx.limits);
    auto& flags = ctx.maintenance;
    const std::optional<bool> push = enabled;
    const std::optional<bool> pop;
    co_await flags.set(push, pop);
    if (!enabled) ctx.drainer.kick();
    co_return http::json_text(http::bhttp::status::ok, maintenance_status(ctx));
}

// POST /api/v1/system/maintenance/pop {enabled}: pop maintenance for every broker.
boost::asio::awaitable<http::response> handle_set_pop_maintenance(broker_context& ctx, http::request_context& rc) {
    const bool enabled = parse_enabled(rc, ctx.limits);
    auto& flags = ctx.maintenance;
    const std::optional<bool> push;
    const std::optional<bool> pop = enabled;
    co_await flags.set(push, pop);
    co_return http::json_text(http::bhttp::status::ok, maintenance_status(ctx));
}

}  // namespace queen::api
