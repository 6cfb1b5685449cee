#pragma once
// The OpenAPI 3.1 document of the route table (GET /api/v1/openapi.json).
#include "api/route_table.hpp"

#include <span>
#include <string>

namespace queen::api {

// One operation per route: path parameters from its ":name" segments, its summary, its access
// level as x-queen-access, a JSON 200 answer and the {error} answer of every refusal.
std::string openapi_document(std::span<const route_spec> routes, std::string_view version);

}  // namespace queen::api
