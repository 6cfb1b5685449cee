#include "api/json_text.hpp"
#include "api/payload_encryption.hpp"
#include "api/maintenance.hpp"
#include "api/routes.hpp"
#include "core/message_id.hpp"
#include "db/pg_error.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"

namespace queen::api {

// POST /api/v1/push: 201 with one answer per item, in request order.
boost::asio::awaitable<http::response> handle_push(app::broker_context& ctx, http::request_context& rc) {
    const std::int64_t accepted_at = wall_clock_us();
    auto body = parse_json_body(rc.req.body());
    auto items = parse_push(body, ctx.limits);
    co_await seal_payloads(ctx, items);
    // Push maintenance, or spooled pushes not yet drained: to the spool (docs/maintenance-and-spool.md).
    if (!items.empty() && push_goes_to_spool(ctx)) co_return co_await spool_push(ctx, items, accepted_at, false);
    std::vector<core::push_outcome> outcomes;
    bool database_lost = false;
    try {
        if (!items.empty()) outcomes = co_await ctx.fusion.push(items);
    } catch (const db::pg_error& e) {
        if (e.kind() != db::pg_error_kind::connection_lost || !ctx.spool) throw;
        log::warn("push: database unavailable ({}); {} item(s) go to the spool", e.what(), items.size());
        database_lost = true;
    }
    // The attempt may have committed before the connection was lost: spooled "in doubt".
    if (database_lost) co_return co_await spool_push(ctx, items, accepted_at, true);
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) {
        const auto& item = items[i];
        const auto& o = outcomes[i];
        if (i) out += ',';
        out += "{\"index\":" + std::to_string(i) + ",\"transaction_id\":";
        append_json_string(out, item.transaction_id);
        out += o.queued ? ",\"status\":\"queued\"" : ",\"status\":\"duplicate\"";
        out += ",\"message_id\":\"" + core::message_id(o.partition_id, o.offset) + "\"";
        if (o.queued) {
            out += ",\"partition_id\":\"" + std::to_string(o.partition_id) + "\"";
            out += ",\"offset\":" + std::to_string(o.offset);
            out += ",\"trace_id\":";
            if (item.trace_id) append_json_string(out, *item.trace_id);
            else out += "null";
        }
        out += ",\"queueName\":";
        append_json_string(out, item.queue);
        out += '}';
    }
    out += ']';
    co_return http::json_text(http::bhttp::status::created, std::move(out));
}

}  // namespace queen::api
