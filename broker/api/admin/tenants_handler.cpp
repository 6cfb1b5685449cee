// GET /api/v1/system/tenants: every tenant with a queue, for operators (docs/tenancy.md).
#include "api/admin/handlers.hpp"
#include "http/responses.hpp"
#include "render/json_writer.hpp"
#include "store/tenants_store.hpp"

#include <string>

namespace queen::api {

// The tenants with their queues (counted now) and stored bytes (the newest stats snapshot;
// null unless QUEEN_TENANT_MAX_BYTES has the snapshot count them), in name order; the queues
// without a tenant are listed under QUEEN_TENANCY_DEFAULT.
boost::asio::awaitable<http::response> handle_list_tenants(broker_context& ctx, http::request_context&) {
    const auto rows = co_await store::tenant_usage(ctx.pool, false);
    const auto& limits = ctx.config.per_tenant;
    const auto limit = [](auto v) { return v > 0 ? std::optional<std::uint64_t>(v) : std::nullopt; };
    render::json_writer out;
    out.begin_object()
        .field("tenancy", !ctx.config.tenancy_header.empty())
        .field("defaultTenant", ctx.config.tenancy_default)
        .key("limits")
        .begin_object()
        .field("maxQueues", limit(limits.max_queues))
        .field("maxBytes", limit(limits.max_bytes))
        .field("maxLongPolls", limit(static_cast<std::uint64_t>(limits.max_longpolls)))
        .field("requestsPerSecond",
               limits.rate_per_second > 0 ? std::optional<double>(limits.rate_per_second) : std::nullopt)
        .end_object()
        .key("tenants")
        .begin_array();
    for (const auto& r : rows) {
        out.begin_object()
            .field("tenant", r.tenant.empty() ? ctx.config.tenancy_default : r.tenant)
            .field("queues", r.queues)
            .field("storedBytes", limits.max_bytes > 0 ? std::optional<std::int64_t>(r.stored_bytes) : std::nullopt)
            .end_object();
    }
    out.end_array().end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

}  // namespace queen::api
