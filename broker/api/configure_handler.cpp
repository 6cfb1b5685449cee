#include "api/routes.hpp"
#include "http/responses.hpp"

namespace queen::api {

// POST /api/v1/configure: create or reconfigure a queue; echoes every stored option.
boost::asio::awaitable<http::response> handle_configure(app::broker_context& ctx, http::request_context& rc) {
    auto body = parse_json_body(rc.req.body(), ctx.limits);
    auto r = parse_configure(body, ctx.limits);
    const std::string options = r.options.dump();
    std::vector<db::pg_param> params{db::pg_param::text(r.queue),
                                     r.namespace_name ? db::pg_param::text(*r.namespace_name) : db::pg_param::null(),
                                     r.task ? db::pg_param::text(*r.task) : db::pg_param::null(),
                                     db::pg_param::text(options)};
    auto res = co_await ctx.pool.exec(
        "SELECT queue_id, partition_id, options FROM queen.configure($1, $2, $3, $4::jsonb)", params);
    if (ctx.queue_settings) ctx.queue_settings->forget(r.queue);
    nlohmann::json out{{"configured", true},
                       {"queueId", std::string(res.text(0, 0))},
                       {"partitionId", std::string(res.text(0, 1))},
                       {"queue", r.queue},
                       {"namespace", r.namespace_name ? nlohmann::json(*r.namespace_name) : nlohmann::json()},
                       {"task", r.task ? nlohmann::json(*r.task) : nlohmann::json()},
                       {"options", nlohmann::json::parse(res.text(0, 2))}};
    co_return http::json(http::bhttp::status::ok, out);
}

}  // namespace queen::api
