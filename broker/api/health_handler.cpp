#include "api/routes.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"

namespace queen::api {

// GET /health: checks the database for real (a query), 503 when it does not answer.
boost::asio::awaitable<http::response> handle_health(app::broker_context& ctx, http::request_context&) {
    nlohmann::json body{{"version", QUEEN_VERSION}, {"databaseMode", ctx.database_mode},
                        {"schemaVersion", ctx.schema_version}, {"codec", "raw"}};
    try {
        auto res = co_await ctx.pool.exec("SELECT current_setting('server_version')");
        body["status"] = "healthy";
        body["database"] = "connected";
        body["postgresVersion"] = std::string(res.text(0, 0));
        co_return http::json(http::bhttp::status::ok, body);
    } catch (const std::exception& e) {
        log::warn("health check: database not reachable: {}", e.what());
    }
    body["status"] = "unhealthy";
    body["database"] = "disconnected";
    co_return http::json(http::bhttp::status::service_unavailable, body);
}

}  // namespace queen::api
