#include "api/routes.hpp"
#include "http/responses.hpp"

namespace queen::api {

// DELETE /api/v1/resources/queues/:queue: removes the queue and all it stores.
boost::asio::awaitable<http::response> handle_delete_queue(app::broker_context& ctx, http::request_context& rc) {
    const std::string& queue = rc.path_params.at(0);
    check_name("queue", queue, ctx.limits);
    std::vector<db::pg_param> params{db::pg_param::text(queue)};
    auto res = co_await ctx.pool.exec("SELECT queen.delete_queue($1)", params);
    nlohmann::json body{{"deleted", true}, {"queue", queue}, {"existed", res.boolean(0, 0)}};
    co_return http::json(http::bhttp::status::ok, body);
}

}  // namespace queen::api
