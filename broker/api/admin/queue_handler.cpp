#include "api/admin/handlers.hpp"
#include "api/shared/tenant_names.hpp"
#include "http/responses.hpp"
#include "render/json_writer.hpp"
#include "store/queues_store.hpp"

namespace queen::api {

// DELETE /api/v1/resources/queues/:queue: removes the queue and all it stores.
boost::asio::awaitable<http::response> handle_delete_queue(broker_context& ctx, http::request_context& rc) {
    const std::string& queue = rc.path_params.at(0);
    check_name("queue", queue, ctx.limits);
    const std::string key = queue_key(rc.tenant, queue, "queue");
    const bool existed = co_await store::delete_queue(ctx.pool, key);
    render::json_writer out;
    out.begin_object().field("deleted", true).field("queue", queue).field("existed", existed).end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

}  // namespace queen::api
