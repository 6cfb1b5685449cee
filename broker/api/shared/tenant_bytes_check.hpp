#pragma once
// QUEEN_TENANT_MAX_BYTES on the routes that store messages (push, transaction, stream cycle).
#include "api/shared/broker_context.hpp"
#include "domain/tenant_scope.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

namespace queen::api {

// Whether stores must pass refuse_past_tenant_bytes: checked first, so that a broker without
// the limit (every one with tenancy off) starts no coroutine for it on the push path.
inline bool tenant_bytes_limited(const broker_context& ctx) noexcept {
    return ctx.tenant_bytes.limit() > 0;
}

// Returns when the tenant may store more; throws a 429 api_error naming the limit when the
// newest stats snapshot counts its stored bytes at or past QUEEN_TENANT_MAX_BYTES.
boost::asio::awaitable<void> refuse_past_tenant_bytes(broker_context& ctx, const domain::tenant_scope& tenant);

}  // namespace queen::api
