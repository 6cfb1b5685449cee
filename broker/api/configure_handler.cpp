#include "api/routes.hpp"
#include "http/responses.hpp"
#include "store/queues_store.hpp"

namespace queen::api {

// POST /api/v1/configure: create or reconfigure a queue; echoes every stored option.
boost::asio::awaitable<http::response> handle_configure(app::broker_context& ctx, http::request_context& rc) {
    auto body = parse_json_body(rc.req.body(), ctx.limits);
    auto r = parse_configure(body, ctx.limits);
    const store::queue_config config{r.queue, r.namespace_name, r.task, r.options.dump()};
    const auto stored = co_await store::configure_queue(ctx.pool, config);
    ctx.queue_settings.forget(r.queue);
    nlohmann::json out{{"configured", true},
                       {"queueId", stored.queue_id},
                       {"partitionId", stored.partition_id},
                       {"queue", r.queue},
                       {"namespace", r.namespace_name ? nlohmann::json(*r.namespace_name) : nlohmann::json()},
                       {"task", r.task ? nlohmann::json(*r.task) : nlohmann::json()},
                       {"options", nlohmann::json::parse(stored.options_json)}};
    co_return http::json(http::bhttp::status::ok, out);
}

}  // namespace queen::api
