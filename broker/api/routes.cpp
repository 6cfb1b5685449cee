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
    router.add(bhttp::get, "/api/v1/resources/queues", bind(handle_list_queues));
    router.add(bhttp::get, "/api/v1/resources/queues/:queue", bind(handle_get_queue));
    router.add(bhttp::delete_, "/api/v1/resources/queues/:queue", bind(handle_delete_queue));
    router.add(bhttp::get, "/api/v1/resources/namespaces", bind(handle_list_namespaces));
    router.add(bhttp::get, "/api/v1/resources/tasks", bind(handle_list_tasks));
    router.add(bhttp::post, "/api/v1/stats/refresh", bind(handle_refresh_stats));
    router.add(bhttp::post, "/api/v1/lease/:leaseId/extend", bind(handle_extend_lease));
    router.add(bhttp::get, "/api/v1/consumer-groups", bind(handle_list_groups));
    // Before /:group: a group named "lagging" cannot be read by GET, as in Queen.
    router.add(bhttp::get, "/api/v1/consumer-groups/lagging", bind(handle_lagging_groups));
    router.add(bhttp::get, "/api/v1/consumer-groups/:group", bind(handle_get_group));
    router.add(bhttp::delete_, "/api/v1/consumer-groups/:group", bind(handle_delete_group));
    router.add(bhttp::delete_, "/api/v1/consumer-groups/:group/queues/:queue", bind(handle_delete_group_queue));
    router.add(bhttp::post, "/api/v1/consumer-groups/:group/queues/:queue/seek", bind(handle_seek_group));
    router.add(bhttp::post, "/api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek",
               bind(handle_seek_group_partition));
    router.add(bhttp::post, "/api/v1/consumer-groups/:group/subscription", bind(handle_set_group_subscription));
    // Dead letters and traces (api/dlq_handler.cpp, api/traces_handler.cpp; by-name before :partitionId).
    router.add(bhttp::get, "/api/v1/dlq", bind(handle_dlq_list));
    router.add(bhttp::delete_, "/api/v1/dlq", bind(handle_dlq_purge));
    router.add(bhttp::post, "/api/v1/dlq/requeue", bind(handle_dlq_requeue));
    router.add(bhttp::post, "/api/v1/traces", bind(handle_trace_record));
    router.add(bhttp::get, "/api/v1/traces/names", bind(handle_trace_names));
    router.add(bhttp::get, "/api/v1/traces/by-name/:name", bind(handle_traces_by_name));
    router.add(bhttp::get, "/api/v1/traces/:partitionId/:transactionId", bind(handle_message_traces));
    router.add(bhttp::get, "/api/v1/system/maintenance", bind(handle_get_maintenance));
    router.add(bhttp::post, "/api/v1/system/maintenance", bind(handle_set_maintenance));
    router.add(bhttp::get, "/api/v1/system/maintenance/pop", bind(handle_get_maintenance));
    router.add(bhttp::post, "/api/v1/system/maintenance/pop", bind(handle_set_pop_maintenance));
}

}  // namespace queen::api
