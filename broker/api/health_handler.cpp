#include "api/routes.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"
#include "schema/codec_path.hpp"

namespace queen::api {

// GET /health: checks the database for real (a query) and reports its codec path; 503 when
// the database does not answer.
boost::asio::awaitable<http::response> handle_health(app::broker_context& ctx, http::request_context&) {
    nlohmann::json body{{"version", QUEEN_VERSION}, {"databaseMode", ctx.database_mode},
                        {"schemaVersion", ctx.schema_version}};
    try {
        // The codec path is the database's and may change while brokers run: asked live.
        auto res = co_await ctx.pool.exec("SELECT current_setting('server_version'), queen.codec_extension()");
        body["status"] = "healthy";
        body["database"] = "connected";
        body["postgresVersion"] = std::string(res.text(0, 0));
        schema::codec_path path;
        if (!res.is_null(0, 1)) path.extension_version = std::string(res.text(0, 1));
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
