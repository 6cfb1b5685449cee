#pragma once
// The delivery room's handlers: push, pop, acknowledgements, transactions and lease
// extension. Each answers one route of the table in api/routes.cpp (docs/http-api.md).
#include "api/shared/broker_context.hpp"
#include "api/shared/requests.hpp"
#include "http/router.hpp"

namespace queen::api {

boost::asio::awaitable<http::response> handle_push(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_pop(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_ack(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_ack_batch(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_transaction(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_extend_lease(broker_context& ctx, http::request_context& rc);

}  // namespace queen::api
