#include "api/delivery/handlers.hpp"
#include "api/shared/activity_recording.hpp"
#include "api/shared/payload_encryption.hpp"
#include "api/shared/push_answers.hpp"
#include "api/shared/push_request.hpp"
#include "api/shared/spool_push.hpp"
#include "api/shared/tenant_bytes_check.hpp"
#include "api/shared/tenant_names.hpp"
#include "db/pg_error.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"
#include "util/wall_clock.hpp"

namespace queen::api {

// POST /api/v1/push: 201 with one answer per item, in request order.
boost::asio::awaitable<http::response> handle_push(broker_context& ctx, http::request_context& rc) {
    const std::int64_t accepted_at = util::wall_clock_us();
    auto request = parse_push(rc.req.body(), ctx.limits);
    auto& items = request.items;
    key_queue_names(items, rc.tenant);
    stamp_producer(items, rc.subject);
    if (!items.empty() && tenant_bytes_limited(ctx)) co_await refuse_past_tenant_bytes(ctx, rc.tenant);
    co_await seal_payloads(ctx, items);
    // Push maintenance, or spooled pushes not yet drained: to the spool (docs/maintenance-and-spool.md).
    if (!items.empty() && push_goes_to_spool(ctx))
        co_return co_await spool_push(ctx, items, accepted_at, false, rc.tenant);
    std::vector<domain::push_outcome> outcomes;
    bool database_lost = false;
    try {
        if (!items.empty()) outcomes = co_await ctx.fusion.push(items);
    } catch (const db::pg_error& e) {
        // A logical shard being moved takes pushes again in seconds; a shard the proxy cannot
        // reach answers 503 (its outage may be long, and spooling would hold every push back).
        if (e.kind() != db::pg_error_kind::connection_lost && e.sqlstate() != db::sqlstate_shard_moving) throw;
        log::warn("push: database unavailable ({}); {} item(s) go to the spool", e.what(), items.size());
        database_lost = true;
    }
    // The attempt may have committed before the connection was lost (or, over shards, on the
    // other shards): spooled "in doubt".
    if (database_lost) co_return co_await spool_push(ctx, items, accepted_at, true, rc.tenant);
    if (!items.empty()) record_push(ctx.activity, ctx.prometheus, items, outcomes);
    std::string out = render_push_answers(items, outcomes, rc.tenant);
    co_return http::json_text(http::bhttp::status::created, std::move(out));
}

}  // namespace queen::api
