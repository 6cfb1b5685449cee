#pragma once
// The administration room's handlers: queues, messages, dead letters, consumer groups,
// traces, maintenance and the operator's listings. Each answers one route of the table in
// api/routes.cpp (docs/http-api.md).
#include "api/shared/broker_context.hpp"
#include "api/shared/requests.hpp"
#include "http/router.hpp"

namespace queen::api {

boost::asio::awaitable<http::response> handle_configure(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_delete_queue(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_list_groups(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_lagging_groups(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_get_group(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_delete_group(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_delete_group_queue(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_seek_group(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_seek_group_partition(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_set_group_subscription(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_browse_messages(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_get_message(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_delete_message(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_queue_messages(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_dlq_list(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_dlq_requeue(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_dlq_purge(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_trace_record(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_message_traces(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_traces_by_name(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_trace_names(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_list_queues(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_get_queue(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_list_namespaces(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_list_tasks(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_refresh_stats(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_get_maintenance(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_set_maintenance(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_set_pop_maintenance(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_list_tenants(broker_context& ctx, http::request_context& rc);

}  // namespace queen::api
