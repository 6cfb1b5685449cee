#pragma once
// Admission before a route's handler runs: with auth on, a route above public whose path is
// not in JWT_SKIP_PATHS needs a valid token whose roles reach the route's level. Every route
// of the route table is registered through here (api/routes.cpp), so none can be left open.
#include "api/route_table.hpp"

namespace queen::api {

// Answers the request with r's handler once it is admitted; a refusal is an api_error (401,
// 403 or 503 with the contract's text) and the handler never runs. Sets rc.subject.
boost::asio::awaitable<http::response> admit_and_handle(app::broker_context& ctx, const route_spec& r,
                                                        http::request_context& rc);

}  // namespace queen::api
