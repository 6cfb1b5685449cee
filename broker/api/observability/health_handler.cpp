#include "api/observability/handlers.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"
#include "render/json_writer.hpp"
#include "schema/codec_path.hpp"
#include "store/queues_store.hpp"

namespace queen::api {

// GET /health: checks the database for real (a query) and reports its codec path; 503 when
// the database does not answer.
boost::asio::awaitable<http::response> handle_health(broker_context& ctx, http::request_context&) {
    std::optional<store::database_health> health;
    try {
        // The codec path is the database's and may change while brokers run: asked live.
        health = co_await store::probe_database(ctx.pool);
    } catch (const std::exception& e) {
        log::warn("health check: database not reachable: {}", e.what());
    }
    render::json_writer out;
    out.begin_object()
        .field("status", health ? "healthy" : "unhealthy")
        .field("database", health ? "connected" : "disconnected")
        .field("version", QUEEN_VERSION)
        .field("databaseMode", ctx.database_mode)
        .field("schemaVersion", ctx.schema_version);
    if (health) {
        schema::codec_path path;
        path.extension_version = health->extension_version;
        out.field("postgresVersion", health->server_version)
            .field("codecPath", path.name())
            .field("extension", path.accelerated() ? path.extension_version : std::nullopt)
            .field("codec", path.segment_codec());
    }
    // With tenancy on, what a client (the dashboard) needs to name its tenant; absent when off.
    if (!ctx.config.tenancy_header.empty()) {
        const auto& claim = ctx.config.auth.tenant_claim;
        out.key("tenancy")
            .begin_object()
            .field("header", ctx.config.tenancy_header)
            .field("claim", claim.empty() ? std::nullopt : std::optional<std::string>(claim))
            .end_object();
    }
    out.end_object();
    const auto status = health ? http::bhttp::status::ok : http::bhttp::status::service_unavailable;
    co_return http::json_text(status, out.take());
}

}  // namespace queen::api
