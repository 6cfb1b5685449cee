// POST /api/v1/lease/:leaseId/extend (API.md; decisions in docs/consumer-groups.md).
#include "api/group_requests.hpp"
#include "api/routes.hpp"
#include "core/message_id.hpp"
#include "http/responses.hpp"
#include "segment/segment_codec.hpp"
#include "store/leases_store.hpp"

#include <nlohmann/json.hpp>

namespace queen::api {

namespace asio = boost::asio;

// Answers 200 with one element: [{leaseId, success, expiresAt, error}]. expiresAt is the
// lease's expiry after the call (ISO UTC, µs) when it succeeded, else null; error is
// "Lease not found" (no cursor carries the id, or the id is not a UUID) or "Lease already
// expired". 400 only for a bad body.
asio::awaitable<http::response> handle_extend_lease(app::broker_context& ctx, http::request_context& rc) {
    const std::string& lease = rc.path_params.at(0);
    const std::int64_t seconds = parse_extend_seconds(rc.req.body(), ctx.limits);
    nlohmann::ordered_json item{{"leaseId", lease}, {"success", false}, {"expiresAt", nullptr}, {"error", nullptr}};
    auto uuid = segment::parse_uuid(lease);
    if (!uuid) {
        item["error"] = "Lease not found";
    } else {
        const std::string id = segment::uuid_to_string(*uuid);
        const auto ext = co_await store::extend_lease(ctx.pool, id, seconds);
        if (ext.status == store::lease_extension_status::extended) {
            item["success"] = true;
            item["expiresAt"] = core::iso_time(ext.expires_at_us);
        } else if (ext.status == store::lease_extension_status::expired) {
            item["error"] = "Lease already expired";
        } else {
            item["error"] = "Lease not found";
        }
    }
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    out.push_back(std::move(item));
    co_return http::json_text(http::bhttp::status::ok,
                              out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

}  // namespace queen::api
