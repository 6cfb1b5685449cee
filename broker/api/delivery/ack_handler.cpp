#include "api/delivery/handlers.hpp"
#include "api/shared/activity_recording.hpp"
#include "api/shared/opaque_span_offsets.hpp"
#include "http/responses.hpp"
#include "render/json_writer.hpp"
#include "segment/segment_codec.hpp"
#include "store/acks_store.hpp"

#include <map>
#include <set>

namespace queen::api {

namespace asio = boost::asio;

namespace {

using ack_answer = store::ack_outcome;

// The acks `members` of one group as a queen.ack call takes them.
std::vector<store::ack_request> ack_call(const std::vector<ack_item>& acks, const std::vector<std::size_t>& members) {
    std::vector<store::ack_request> out;
    for (auto i : members) {
        const auto& a = acks[i];
        std::optional<std::string> lease;
        if (a.lease_id && !a.lease_id->empty()) lease = *a.lease_id;
        out.push_back(
            {*parse_partition_id(a.partition_id), a.transaction_id, a.offset, lease, to_sql(a.status), a.error});
    }
    return out;
}

// Applies acks, one queen.ack call per consumer group, within the tenant `scope`; answers in
// input order. Acks the database cannot place by transaction id are resolved by the broker's
// own decoder (with_undecodable_spans_resolved).
asio::awaitable<std::vector<ack_answer>> apply_acks(broker_context& ctx, std::vector<ack_item>& acks,
                                                    const std::optional<std::string>& scope) {
    std::vector<ack_answer> answers(acks.size());
    std::map<std::string, std::vector<std::size_t>> by_group;
    for (std::size_t i = 0; i < acks.size(); ++i) {
        auto pid = parse_partition_id(acks[i].partition_id);
        bool lease_ok = !acks[i].lease_id || acks[i].lease_id->empty() || segment::parse_uuid(*acks[i].lease_id);
        if (!pid || !lease_ok) {
            answers[i].error = "unresolvable";
            answers[i].lease_released = true;
            continue;
        }
        by_group[acks[i].consumer_group].push_back(i);
    }
    std::set<std::string> released_queues;
    for (const auto& entry : by_group) {
        const std::string& group = entry.first;
        const std::vector<std::size_t>& members = entry.second;
        std::vector<ack_item*> pending;
        for (auto i : members) pending.push_back(&acks[i]);
        auto attempt = [&ctx, &acks, &group, &members, &scope]() -> asio::awaitable<std::vector<store::ack_outcome>> {
            auto call = ack_call(acks, members);
            co_return co_await ctx.ack_fusion.apply(group, std::move(call), scope);
        };
        auto outcomes = co_await with_undecodable_spans_resolved(ctx.pool, std::move(pending), attempt);
        for (auto& o : outcomes) {
            if (o.lease_released && o.queue_name) released_queues.insert(*o.queue_name);
            answers[members[o.item - 1]] = std::move(o);
        }
    }
    // A released lease makes its partition claimable again: wake parked pops.
    if (!released_queues.empty()) ctx.notifier.queues_changed({released_queues.begin(), released_queues.end()});
    co_return answers;
}

void write_answer(render::json_writer& out, const ack_item& item, const ack_answer& a) {
    out.begin_object()
        .field("success", a.success)
        .field("transactionId", item.transaction_id)
        .field("partitionId", item.partition_id)
        .field("offset", a.offset);
    if (a.noop) out.field("noop", true);
    if (a.dlq) out.field("dlq", true);
    out.field("leaseReleased", a.lease_released).field("error", a.error).end_object();
}

}  // namespace

// POST /api/v1/ack
asio::awaitable<http::response> handle_ack(broker_context& ctx, http::request_context& rc) {
    const auto document = parse_json_body(rc.req.body(), ctx.limits);
    const auto& body = document.value;
    std::vector<ack_item> acks{parse_ack(body, ctx.limits)};
    auto answers = co_await apply_acks(ctx, acks, rc.tenant.sql_scope());
    record_acks(ctx.activity, ctx.prometheus, acks, answers);
    render::json_writer out;
    write_answer(out, acks[0], answers[0]);
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

// POST /api/v1/ack/batch
asio::awaitable<http::response> handle_ack_batch(broker_context& ctx, http::request_context& rc) {
    const auto document = parse_json_body(rc.req.body(), ctx.limits);
    const auto& body = document.value;
    auto acks = parse_ack_batch(body, ctx.limits);
    auto answers = co_await apply_acks(ctx, acks, rc.tenant.sql_scope());
    record_acks(ctx.activity, ctx.prometheus, acks, answers);
    render::json_writer out;
    out.begin_array();
    for (std::size_t i = 0; i < acks.size(); ++i) write_answer(out, acks[i], answers[i]);
    out.end_array();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

}  // namespace queen::api
