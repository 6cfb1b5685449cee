#pragma once
// Admission before a route's body is read and its handler runs: with auth on, a route above public whose path is
// not in JWT_SKIP_PATHS needs a valid token whose roles reach the route's level. Every route
// of the route table is registered through here (api/routes.cpp), so none can be left open.
#include "api/route_table.hpp"

namespace queen::api {

// Admits a request to r from its header alone, before its body is read: returns to admit it,
// with rc.subject, rc.caller_admin and rc.tenant set; throws an api_error (401, 403 or 503
// with the contract's text, 429 past the rate limit; 400 or 403 for a missing, invalid or
// contradicted tenant; 403 for a token with a tenant claim on an operator route) to refuse it,
// and then its handler never runs.
boost::asio::awaitable<void> admit(broker_context& ctx, const route_spec& r, http::request_context& rc);

}  // namespace queen::api
