#include "api/admin/handlers.hpp"
#include "api/shared/tenant_names.hpp"
#include "http/responses.hpp"
#include "render/json_writer.hpp"
#include "store/queues_store.hpp"

namespace queen::api {

// POST /api/v1/configure: create or reconfigure a queue; echoes every stored option.
boost::asio::awaitable<http::response> handle_configure(broker_context& ctx, http::request_context& rc) {
    const auto document = parse_json_body(rc.req.body(), ctx.limits);
    const auto& body = document.value;
    auto r = parse_configure(body, ctx.limits);
    const std::string key = queue_key(rc.tenant, r.queue, "queue");
    const store::queue_config config{key, r.namespace_name, r.task, r.options.dump()};
    const auto stored = co_await store::configure_queue(ctx.pool, config);
    ctx.queue_settings.forget(key);
    render::json_writer out;
    out.begin_object()
        .field("configured", true)
        .field("queueId", stored.queue_id)
        .field("partitionId", stored.partition_id)
        .field("queue", r.queue)
        .field("namespace", r.namespace_name)
        .field("task", r.task)
        .raw_field("options", stored.options_json)
        .end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

}  // namespace queen::api
