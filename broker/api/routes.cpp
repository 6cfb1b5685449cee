#include "api/routes.hpp"

#include "api/admin/handlers.hpp"
#include "api/delivery/handlers.hpp"
#include "api/observability/handlers.hpp"
#include "api/openapi.hpp"
#include "api/route_guard.hpp"
#include "api/route_table.hpp"
#include "api/streams/handlers.hpp"
#include "http/responses.hpp"

#include <array>

namespace queen::api {

namespace {

using bhttp = http::bhttp::verb;
using enum auth::access_level;
using enum tenancy_rule;

// GET /api/v1/openapi.json: the document of the table below.
boost::asio::awaitable<http::response> handle_openapi(broker_context&, http::request_context&) {
    co_return http::json_text(http::bhttp::status::ok, openapi_document(route_table(), QUEEN_VERSION));
}

// Levels as docs/security.md "Access per route" lists them; a route it does not list needs
// read-write. Literal routes come before the patterns that would also match them.
const std::array routes{
    route_spec{bhttp::get, "/health", handle_health, anyone, outside, "Health of the broker and its database"},
    // The metrics need admin, and are public while JWT_SKIP_PATHS lists them (as it does by
    // default).
    route_spec{bhttp::get, "/metrics", handle_metrics, admin, operator_,
               "This broker's process, request and pool figures (JSON); public while JWT_SKIP_PATHS lists it"},
    route_spec{bhttp::get, "/metrics/prometheus", handle_metrics_prometheus, admin, operator_,
               "Prometheus text exposition: counters, histograms, snapshot gauges; public while JWT_SKIP_PATHS "
               "lists it"},
    route_spec{bhttp::get, "/api/v1/openapi.json", handle_openapi, anyone, outside, "This document"},
    route_spec{bhttp::get, "/", handle_dashboard_page, anyone, outside,
               "The dashboard's page (also the answer to any GET outside the reserved prefixes)"},
    route_spec{bhttp::get, "/assets/:file", handle_dashboard_asset, anyone, outside, "A static file of the dashboard"},
    route_spec{bhttp::post, "/api/v1/configure", handle_configure, read_write, tenant, "Create or reconfigure a queue"},
    route_spec{bhttp::post, "/api/v1/push", handle_push, read_write, tenant, "Push messages"},
    route_spec{bhttp::get, "/api/v1/pop/queue/:queue", handle_pop, read_write, tenant,
               "Pop from any partition of a queue"},
    route_spec{bhttp::get, "/api/v1/pop/queue/:queue/partition/:partition", handle_pop, read_write, tenant,
               "Pop from one partition"},
    route_spec{bhttp::post, "/api/v1/ack", handle_ack, read_write, tenant, "Acknowledge one message"},
    route_spec{bhttp::post, "/api/v1/ack/batch", handle_ack_batch, read_write, tenant, "Acknowledge several messages"},
    route_spec{bhttp::post, "/api/v1/transaction", handle_transaction, read_write, tenant,
               "Pushes and acknowledgements in one transaction"},
    route_spec{bhttp::post, "/streams/v1/queries", handle_stream_register, read_write, tenant,
               "Register a stream query by name (idempotent; a changed config_hash needs reset)"},
    route_spec{bhttp::post, "/streams/v1/state/get", handle_stream_state_get, read_only, tenant,
               "A stream lane's state rows, sorted by key"},
    route_spec{bhttp::post, "/streams/v1/cycle", handle_stream_cycle, read_write, tenant,
               "A stream cycle: state ops, sink pushes and the source ack in one transaction"},
    route_spec{bhttp::get, "/api/v1/resources/queues", handle_list_queues, read_only, tenant,
               "Queues with their counts (stats snapshot)"},
    route_spec{bhttp::get, "/api/v1/resources/overview", handle_resources_overview, read_only, tenant,
               "Counts, lifetime totals, lag and recent throughput of the cluster"},
    route_spec{bhttp::get, "/api/v1/resources/queues/:queue", handle_get_queue, read_only, tenant,
               "A queue and its partitions, counted now"},
    route_spec{bhttp::delete_, "/api/v1/resources/queues/:queue", handle_delete_queue, admin, tenant,
               "Delete a queue and everything it stores"},
    route_spec{bhttp::get, "/api/v1/resources/namespaces", handle_list_namespaces, read_only, tenant,
               "Namespaces with their counts"},
    route_spec{bhttp::get, "/api/v1/resources/tasks", handle_list_tasks, read_only, tenant, "Tasks with their counts"},
    route_spec{bhttp::get, "/api/v1/resources/streams", handle_list_streams, read_only, tenant,
               "Stream queries with their lanes, state size and source lag, counted now"},
    route_spec{bhttp::post, "/api/v1/stats/refresh", handle_refresh_stats, admin, operator_,
               "Refresh the stats snapshot now"},
    route_spec{bhttp::get, "/api/v1/status", handle_status, read_only, tenant,
               "Throughput, totals, leases, dead letters and brokers over a time window"},
    route_spec{bhttp::get, "/api/v1/status/queues", handle_status_queues, read_only, tenant,
               "Queues with their counts (stats snapshot), paged"},
    route_spec{bhttp::get, "/api/v1/status/analytics", handle_status_analytics, read_only, tenant,
               "Messages pushed per minute, hour or day, zero-filled"},
    route_spec{bhttp::get, "/api/v1/status/buffers", handle_status_buffers, read_only, operator_,
               "The spool of this broker and the database's health"},
    route_spec{bhttp::get, "/api/v1/status/queues/:queue", handle_status_queue, read_only, tenant,
               "A queue, its configuration and its partitions, counted now"},
    route_spec{bhttp::get, "/api/v1/analytics/system-metrics", handle_system_metrics, read_only, operator_,
               "CPU, memory, pool and wait gauges per broker over a time window"},
    route_spec{bhttp::get, "/api/v1/analytics/worker-metrics", handle_worker_metrics, read_only, operator_,
               "Operations, event-loop lag, pool and pop lag over a time window"},
    route_spec{bhttp::get, "/api/v1/analytics/queue-lag", handle_queue_lag, read_only, tenant,
               "Pop lag per minute and queue"},
    route_spec{bhttp::get, "/api/v1/analytics/queue-ops", handle_queue_ops, read_only, tenant,
               "Operations, rates, partitions and parked pops per bucket and queue"},
    route_spec{bhttp::get, "/api/v1/analytics/queue-parked-replicas", handle_queue_parked_replicas, read_only, tenant,
               "Parked long-polls per bucket, queue and broker"},
    route_spec{bhttp::get, "/api/v1/analytics/retention", handle_retention_analytics, read_only, tenant,
               "Messages removed by retention and maxWaitTimeSeconds per bucket"},
    route_spec{bhttp::get, "/api/v1/analytics/postgres-stats", handle_postgres_stats, read_only, operator_,
               "PostgreSQL's cache, vacuum, size and activity statistics for the queen schema"},
    route_spec{bhttp::post, "/api/v1/lease/:leaseId/extend", handle_extend_lease, read_write, tenant, "Extend a lease"},
    route_spec{bhttp::get, "/api/v1/consumer-groups", handle_list_groups, read_only, tenant,
               "Consumer groups, one element per (group, queue)"},
    route_spec{bhttp::get, "/api/v1/consumer-groups/lagging", handle_lagging_groups, read_only, tenant,
               "Cursors whose oldest waiting message is older than minLagSeconds"},
    route_spec{bhttp::get, "/api/v1/consumer-groups/:group", handle_get_group, read_only, tenant,
               "A group's cursors, keyed by queue"},
    route_spec{bhttp::delete_, "/api/v1/consumer-groups/:group", handle_delete_group, admin, tenant,
               "Delete a group on every queue"},
    route_spec{bhttp::delete_, "/api/v1/consumer-groups/:group/queues/:queue", handle_delete_group_queue, admin, tenant,
               "Delete a group on one queue"},
    route_spec{bhttp::post, "/api/v1/consumer-groups/:group/queues/:queue/seek", handle_seek_group, read_write, tenant,
               "Seek a group's cursors on a queue to the end or to a time"},
    route_spec{bhttp::post, "/api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek",
               handle_seek_group_partition, read_write, tenant, "Seek a group's cursor on one partition to its end"},
    route_spec{bhttp::post, "/api/v1/consumer-groups/:group/subscription", handle_set_group_subscription, read_write,
               tenant, "Rewrite a group's subscription start"},
    route_spec{bhttp::get, "/api/v1/messages", handle_browse_messages, read_only, tenant,
               "Stored messages in a time window with their status, newest first"},
    route_spec{bhttp::get, "/api/v1/messages/:partitionId/:transactionId", handle_get_message, read_only, tenant,
               "A stored message with its payload, status and consumer groups"},
    route_spec{bhttp::delete_, "/api/v1/messages/:partitionId/:transactionId", handle_delete_message, read_write,
               tenant, "Delete a message (a tombstone: no group is handed it again)"},
    route_spec{bhttp::get, "/api/v1/status/queues/:queue/messages", handle_queue_messages, read_only, tenant,
               "A queue's stored messages with their queue-mode status, newest first"},
    route_spec{bhttp::get, "/api/v1/dlq", handle_dlq_list, read_only, tenant, "Dead letters"},
    route_spec{bhttp::delete_, "/api/v1/dlq", handle_dlq_purge, admin, tenant, "Purge dead letters"},
    route_spec{bhttp::post, "/api/v1/dlq/requeue", handle_dlq_requeue, read_write, tenant, "Requeue dead letters"},
    route_spec{bhttp::post, "/api/v1/traces", handle_trace_record, read_write, tenant, "Record a trace event"},
    route_spec{bhttp::get, "/api/v1/traces/names", handle_trace_names, read_only, tenant, "Trace names with counts"},
    route_spec{bhttp::get, "/api/v1/traces/by-name/:name", handle_traces_by_name, read_only, tenant,
               "Traces carrying a name"},
    route_spec{bhttp::get, "/api/v1/traces/:partitionId/:transactionId", handle_message_traces, read_only, tenant,
               "A message's traces"},
    route_spec{bhttp::get, "/api/v1/system/maintenance", handle_get_maintenance, admin, operator_,
               "The maintenance flags"},
    route_spec{bhttp::post, "/api/v1/system/maintenance", handle_set_maintenance, admin, operator_,
               "Switch push maintenance"},
    route_spec{bhttp::get, "/api/v1/system/maintenance/pop", handle_get_maintenance, admin, operator_,
               "The maintenance flags"},
    route_spec{bhttp::post, "/api/v1/system/maintenance/pop", handle_set_pop_maintenance, admin, operator_,
               "Switch pop maintenance"},
    route_spec{bhttp::get, "/api/v1/system/tenants", handle_list_tenants, admin, operator_,
               "Tenants with their queues and stored bytes, and the per-tenant limits"},
};

}  // namespace

std::string_view access_name(access_level level) noexcept {
    switch (level) {
        case access_level::anyone:
            return "public";
        case access_level::read_only:
            return "read-only";
        case access_level::read_write:
            return "read-write";
        case access_level::admin:
            return "admin";
    }
    return "read-write";
}

std::string_view tenancy_name(tenancy_rule rule) noexcept {
    switch (rule) {
        case tenancy_rule::outside:
            return "outside";
        case tenancy_rule::tenant:
            return "tenant";
        case tenancy_rule::operator_:
            return "operator";
    }
    return "operator";
}

std::span<const route_spec> route_table() {
    return routes;
}

void register_routes(http::router& router, broker_context& ctx) {
    for (const auto& r : route_table()) {
        // Every route is admitted at its level from its header, before its body is read
        // (api/route_guard.cpp).
        const route_spec* spec = &r;
        // GETs below read-write have no side effects (the read-write GETs are the pops), so
        // they answer HEAD too.
        router.add(
            r.method, std::string(r.path), [&ctx, spec](http::request_context& rc) { return admit(ctx, *spec, rc); },
            [&ctx, spec](http::request_context& rc) { return spec->handler(ctx, rc); },
            r.method == bhttp::get && r.access != read_write);
    }
    // The dashboard's client-side routes: any GET outside these first segments that no route
    // matches answers the page; under them an unknown path stays the router's JSON 404.
    router.set_fallback({"api", "streams", "metrics", "health", "assets"},
                        [&ctx](http::request_context& rc) { return handle_dashboard_page(ctx, rc); });
}

}  // namespace queen::api
