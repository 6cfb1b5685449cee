#include "api/routes.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"
#include "schema/codec_path.hpp"
#include "store/queues_store.hpp"

namespace queen::api {

// GET /health: checks the database for real (a query) and reports its codec path; 503 when
// the database does not answer.
boost::asio::awaitable<http::response> handle_health(app::broker_context& ctx, http::request_context&) {
    nlohmann::json body{{"version", QUEEN_VERSION}, {"databaseMode", ctx.database_mode},
                        {"schemaVersion", ctx.schema_version}};
    try {
        // The codec path is the database's and may change while brokers run: asked live.
        const auto health = co_await store::probe_database(ctx.pool);
        body["status"] = "healthy";
        body["database"] = "connected";
        body["postgresVersion"] = health.server_version;
        schema::codec_path path;
        path.extension_version = health.extension_version;
        body["codecPath"] = path.name();
        body["extension"] = path.accelerated() ? nlohmann::json(*path.extension_version) : nlohmann::json(nullptr);
        body["codec"] = path.segment_codec();
        co_return http::json(http::bhttp::status::ok, body);
    } catch (const std::exception& e) {
        log::warn("health check: database not reachable: {}", e.what());
    }
    body["status"] = "unhealthy";
    body["database"] = "disconnected";
    co_return http::json(http::bhttp::status::service_unavailable, body);
}

}  // namespace queen::api
