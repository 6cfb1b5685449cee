#pragma once
// The endpoint table of API.md, as far as it is built.
#include "app/broker_context.hpp"
#include "http/router.hpp"

namespace queen::api {

void register_routes(http::router& router, app::broker_context& ctx);

// One handler per route (api/*_handler.cpp).
boost::asio::awaitable<http::response> handle_health(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_configure(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_push(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_pop(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_ack(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_ack_batch(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_transaction(app::broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_delete_queue(app::broker_context& ctx, http::request_context& rc);

}  // namespace queen::api
