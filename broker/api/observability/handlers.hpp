#pragma once
// The observability room's handlers: health, metrics, status, analytics and the dashboard.
// Each answers one route of the table in api/routes.cpp (docs/http-api.md).
#include "api/shared/broker_context.hpp"
#include "api/shared/requests.hpp"
#include "http/router.hpp"

namespace queen::api {

boost::asio::awaitable<http::response> handle_health(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_metrics(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_metrics_prometheus(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_dashboard_page(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_dashboard_asset(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_status(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_status_queues(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_status_queue(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_status_analytics(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_status_buffers(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_resources_overview(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_system_metrics(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_worker_metrics(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_queue_lag(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_queue_ops(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_queue_parked_replicas(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_retention_analytics(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_postgres_stats(broker_context& ctx, http::request_context& rc);

}  // namespace queen::api
