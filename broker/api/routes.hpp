#pragma once
// The routes (docs/http-api.md, "Every route") and their handlers.
#include "api/requests.hpp"
#include "app/broker_context.hpp"
#include "http/router.hpp"

namespace queen::api {

void register_routes(http::router& router, app::broker_context& ctx);

// One handler per route (api/*_handler.cpp).
boost::asio::awaitable<http::response> handle_health(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_metrics(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_metrics_prometheus(app::broker_context& ctx, http::request_context& rc);
// The dashboard's page and assets (api/dashboard_handler.cpp).
boost::asio::awaitable<http::response> handle_dashboard_page(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_dashboard_asset(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_configure(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_push(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_pop(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_ack(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_ack_batch(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_transaction(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_delete_queue(app::broker_context& ctx, http::request_context& rc);
// Lease extension and consumer groups (api/lease_handler.cpp, api/consumer_groups_handler.cpp).
boost::asio::awaitable<http::response> handle_extend_lease(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_list_groups(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_lagging_groups(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_get_group(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_delete_group(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_delete_group_queue(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_seek_group(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_seek_group_partition(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_set_group_subscription(app::broker_context& ctx, http::request_context& rc);
// The message browser (api/messages_handler.cpp).
boost::asio::awaitable<http::response> handle_browse_messages(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_get_message(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_delete_message(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_queue_messages(app::broker_context& ctx, http::request_context& rc);
// Dead letters and traces (api/dlq_handler.cpp, api/traces_handler.cpp).
boost::asio::awaitable<http::response> handle_dlq_list(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_dlq_requeue(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_dlq_purge(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_trace_record(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_message_traces(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_traces_by_name(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_trace_names(app::broker_context& ctx, http::request_context& rc);
// The operator's listings and the stats snapshot (api/resources_handler.cpp).
boost::asio::awaitable<http::response> handle_list_queues(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_get_queue(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_list_namespaces(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_list_tasks(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_refresh_stats(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_status(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_status_queues(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_status_queue(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_status_analytics(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_status_buffers(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_resources_overview(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_system_metrics(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_worker_metrics(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_queue_lag(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_queue_ops(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_queue_parked_replicas(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_retention_analytics(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_postgres_stats(app::broker_context& ctx, http::request_context& rc);
// Maintenance and the spool (api/maintenance_handler.cpp).
boost::asio::awaitable<http::response> handle_get_maintenance(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_set_maintenance(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_set_pop_maintenance(app::broker_context& ctx, http::request_context& rc);

}  // namespace queen::api
