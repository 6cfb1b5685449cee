// POST /api/v1/lease/:leaseId/extend (docs/http-api.md; decisions in docs/consumer-groups.md).
#include "api/delivery/handlers.hpp"
#include "api/shared/group_requests.hpp"
#include "domain/message_id.hpp"
#include "http/responses.hpp"
#include "render/json_writer.hpp"
#include "segment/segment_codec.hpp"
#include "store/leases_store.hpp"

namespace queen::api {

namespace asio = boost::asio;

// Answers 200 with one element: [{leaseId, success, expiresAt, error}]. expiresAt is the
// lease's expiry after the call (ISO UTC, µs) when it succeeded, else null; error is
// "Lease not found" (no cursor carries the id, the id is not a UUID, or the lease is on
// another tenant's queue) or "Lease already expired". 400 only for a bad body.
asio::awaitable<http::response> handle_extend_lease(broker_context& ctx, http::request_context& rc) {
    const std::string& lease = rc.path_params.at(0);
    const std::int64_t seconds = parse_extend_seconds(rc.req.body(), ctx.limits);
    std::optional<std::string> expires_at;
    std::optional<std::string_view> error = "Lease not found";
    if (auto uuid = segment::parse_uuid(lease)) {
        const std::string id = segment::uuid_to_string(*uuid);
        const auto ext = co_await store::extend_lease(ctx.pool, id, seconds, rc.tenant.sql_scope());
        if (ext.status == store::lease_extension_status::extended) {
            expires_at = domain::iso_time(ext.expires_at_us);
            error.reset();
        } else if (ext.status == store::lease_extension_status::expired) {
            error = "Lease already expired";
        }
    }
    render::json_writer out;
    out.begin_array().begin_object().field("leaseId", lease).field("success", expires_at.has_value());
    out.field("expiresAt", expires_at).field("error", error).end_object().end_array();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

}  // namespace queen::api
