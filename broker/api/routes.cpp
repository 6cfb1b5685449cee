#include "api/routes.hpp"

namespace queen::api {

void register_routes(http::router& router, app::broker_context& ctx) {
    using bhttp = http::bhttp::verb;
    auto bind = [&ctx](auto fn) {
        return [&ctx, fn](http::request_context& rc) { return fn(ctx, rc); };
    };
    router.add(bhttp::get, "/health", bind(handle_health));
    router.add(bhttp::post, "/api/v1/configure", bind(handle_configure));
    router.add(bhttp::post, "/api/v1/push", bind(handle_push));
    router.add(bhttp::get, "/api/v1/pop/queue/:queue", bind(handle_pop));
    router.add(bhttp::get, "/api/v1/pop/queue/:queue/partition/:partition", bind(handle_pop));
    router.add(bhttp::post, "/api/v1/ack", bind(handle_ack));
    router.add(bhttp::post, "/api/v1/ack/batch", bind(handle_ack_batch));
    router.add(bhttp::post, "/api/v1/transaction", bind(handle_transaction));
    router.add(bhttp::delete_, "/api/v1/resources/queues/:queue", bind(handle_delete_queue));
}

}  // namespace queen::api
