#pragma once
// The routes (docs/http-api.md, "Every route"): the table in api/routes.cpp, served by the
// handlers of the rooms (api/delivery, api/admin, api/observability).
#include "api/shared/broker_context.hpp"
#include "http/router.hpp"

namespace queen::api {

void register_routes(http::router& router, broker_context& ctx);

}  // namespace queen::api
