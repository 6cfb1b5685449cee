#pragma once
// The streams room's handlers: the three server calls of the streaming SDK (docs/streams.md).
// Each answers one route of the table in api/routes.cpp.
#include "api/shared/broker_context.hpp"
#include "http/router.hpp"

namespace queen::api {

boost::asio::awaitable<http::response> handle_stream_register(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_stream_state_get(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_stream_cycle(broker_context& ctx, http::request_context& rc);
boost::asio::awaitable<http::response> handle_list_streams(broker_context& ctx, http::request_context& rc);

}  // namespace queen::api
