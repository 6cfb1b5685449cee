#include "api/json_text.hpp"
#include "api/routes.hpp"
#include "core/message_id.hpp"
#include "http/responses.hpp"

namespace queen::api {

// POST /api/v1/push: 201 with one answer per item, in request order.
boost::asio::awaitable<http::response> handle_push(app::broker_context& ctx, http::request_context& rc) {
    auto body = parse_json_body(rc.req.body());
    auto items = parse_push(body, ctx.limits);
    std::vector<core::push_outcome> outcomes;
    if (!items.empty()) outcomes = co_await ctx.fusion.push(items);
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
