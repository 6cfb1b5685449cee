#include "api/shared/tenant_bytes_check.hpp"

#include "api/shared/api_error.hpp"

#include <string>

namespace queen::api {

boost::asio::awaitable<void> refuse_past_tenant_bytes(broker_context& ctx, const domain::tenant_scope& tenant) {
    const auto scope = tenant.sql_scope();
    if (!scope) co_return;
    const auto stored = co_await ctx.tenant_bytes.at_limit(*scope);
    if (!stored) co_return;
    throw api_error(error_code::too_many_requests,
                    "tenant stored bytes limit reached: the tenant stores " + std::to_string(*stored) +
                        " bytes, QUEEN_TENANT_MAX_BYTES is " + std::to_string(ctx.tenant_bytes.limit()),
                    5);
}

}  // namespace queen::api
