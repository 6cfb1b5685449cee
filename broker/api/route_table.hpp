#pragma once
// The route table: every route the broker serves, with its handler, its access level
// (docs/security.md, "Access per route") and a one-line summary. It is the
// one source of the router's routes (api/routes.cpp) and of the OpenAPI document
// (api/openapi.cpp).
#include "api/shared/broker_context.hpp"
#include "auth/access_level.hpp"
#include "http/types.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

#include <span>
#include <string_view>

namespace queen::api {

using access_level = auth::access_level;  // anyone: public

// "public", "read-only", "read-write" or "admin".
std::string_view access_name(access_level level) noexcept;

// What a route may see when tenancy is on (docs/tenancy.md).
enum class tenancy_rule {
    outside,    // public routes: no tenant, no level
    tenant,     // sees the caller's tenant only: the request names its tenant
    operator_,  // every tenant's data or the whole system: needs admin and a token without a tenant claim
};

// "outside", "tenant" or "operator".
std::string_view tenancy_name(tenancy_rule rule) noexcept;

using route_handler = boost::asio::awaitable<http::response> (*)(broker_context&, http::request_context&);

struct route_spec {
    http::bhttp::verb method;
    std::string_view path;  // ":name" is one path segment
    route_handler handler;
    access_level access;
    tenancy_rule tenancy;  // before summary, so that a route without a rule does not compile
    std::string_view summary;
};

// In registration order: a literal route comes before a pattern that would also match it.
std::span<const route_spec> route_table();

}  // namespace queen::api
