#include "api/delivery/handlers.hpp"
#include "api/delivery/long_poll.hpp"
#include "api/delivery/pop_answer.hpp"
#include "api/shared/activity_recording.hpp"
#include "api/shared/api_error.hpp"
#include "api/shared/payload_encryption.hpp"
#include "api/shared/tenant_names.hpp"
#include "db/pg_error.hpp"
#include "domain/message_id.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"
#include "maintenance/maintenance_flags.hpp"
#include "metrics/activity_counters.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "render/json_writer.hpp"
#include "segment/segment_reader.hpp"
#include "store/pop_store.hpp"
#include "util/wall_clock.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <algorithm>
#include <optional>

namespace queen::api {

namespace asio = boost::asio;

namespace {

// A rendered 200 answer, or no messages.
struct pop_result {
    std::string json;
    std::string lease_id;  // "" with autoAck
    pop_delivery delivered;
    store::claim_counts counts;  // what the claim did besides handing out spans
};

// The partitions of a claim, in the order their segments come.
struct claimed_partition {
    std::int64_t partition_id = 0;
    std::string_view name;
    std::int64_t span_start = 0;  // exclusive
    std::int64_t span_end = 0;    // inclusive
};

std::vector<claimed_partition> partitions_of(const store::claimed_spans& claimed, std::string& lease_id) {
    std::vector<claimed_partition> out;
    for (const auto& seg : claimed.segments) {
        if (!out.empty() && out.back().partition_id == seg.partition_id) continue;
        out.push_back({seg.partition_id, seg.partition_name, seg.span_start, seg.span_end});
        if (lease_id.empty() && seg.lease_id) lease_id = *seg.lease_id;
    }
    return out;
}

// The 200 answer of a pop (docs/http-api.md): the envelope of the first partition, then every message of
// the claimed spans but the tombstoned ones, decoded from the segments in place.
// p.queue is the stored key; the answer names the queue as `tenant` knows it.
pop_result render_claimed(const broker_context& ctx, const pop_params& p, const store::claimed_spans& claimed,
                          const domain::tenant_scope& tenant) {
    pop_result r;
    r.counts = claimed.counts;
    const auto parts = partitions_of(claimed, r.lease_id);
    if (parts.empty()) return r;
    std::size_t stored = 0;
    for (const auto& seg : claimed.segments) stored += seg.body.size();
    render::json_writer out(expected_pop_answer_bytes(stored));
    const std::int64_t now_us = util::wall_clock_us();
    out.begin_object()
        .field("success", true)
        .field("queue", tenant.local(p.queue))
        .field("partition", parts.front().name)
        .field("partitionId", std::to_string(parts.front().partition_id))
        .field("leaseId", r.lease_id)
        .field("consumerGroup", p.consumer_group)
        .field("partitionsClaimed", parts.size())
        .key("messages")
        .begin_array();
    std::size_t part = 0;
    for (const auto& seg : claimed.segments) {
        while (parts[part].partition_id != seg.partition_id) ++part;
        const auto& cp = parts[part];
        const pop_message_scope scope{seg.partition_id, cp.name, r.lease_id, p.consumer_group};
        const segment::segment_reader reader(seg.body, seg.first_offset);
        reader.for_each_in_span(
            cp.span_start, cp.span_end, seg.skip_offsets, [&](std::int64_t offset, const segment::frame_view& f) {
                ++r.delivered.messages;
                const std::int64_t lag_ms = std::max<std::int64_t>(0, (now_us - f.created_at_us) / 1000);
                r.delivered.lag_sum_ms += lag_ms;
                r.delivered.lag_max_ms = std::max(r.delivered.lag_max_ms, lag_ms);
                if (crypto::payload_cipher::is_sealed(f.payload))
                    write_pop_message(out, scope, offset, f, deliverable_payload(ctx, f.payload, p.queue));
                else
                    write_pop_message(out, scope, offset, f, f.payload);
            });
    }
    out.end_array().end_object();
    r.json = out.take();
    return r;
}

// Claims spans through the store once and renders the messages of the claimed spans.
asio::awaitable<pop_result> pop_once(broker_context& ctx, const pop_params& p, const domain::tenant_scope& tenant) {
    const store::pop_claim claim{p.queue,      p.partition, p.consumer_group, p.batch,
                                 p.partitions, p.auto_ack,  p.subscribe_all,  p.subscription_at};
    const auto claimed = co_await ctx.pop_fusion.claim(claim);
    co_return render_claimed(ctx, p, claimed, tenant);
}

// A long-poll's claim: nullopt while the database (or a shard of it) cannot be reached (a
// failover, a restart, a logical shard's move), so that the poll stays parked and claims again at its next wake-up or
// re-check instead of answering 503; at its deadline it answers 204 as for an empty queue. A claim that committed
// before its connection was lost leaves a lease that expires (docs/deployment.md, "Failover").
asio::awaitable<std::optional<pop_result>> claim_while_parked(broker_context& ctx, const pop_params& p,
                                                              const domain::tenant_scope& tenant) {
    try {
        co_return co_await pop_once(ctx, p, tenant);
    } catch (const db::pg_error& e) {
        if (!db::database_unavailable(e)) throw;
        log::debug("pop: a parked long-poll of {} waits for the database: {}", p.queue, e.what());
    }
    co_return std::nullopt;
}

// Releases the lease of a pop whose response could not be written, and wakes parked pops.
asio::awaitable<void> release_unwritten_lease(db::pg_pool* pool, services::push_notifier* notifier, std::string lease,
                                              std::string group, std::string queue) {
    try {
        co_await store::release_lease(*pool, lease, group);
        notifier->queues_changed({queue});
    } catch (const std::exception& e) {
        log::warn("could not release lease {} of an unwritten pop: {}", lease, e.what());
    }
}

// A pop whose answer cannot be written (client gone) gives its lease back at once.
void release_if_unwritten(broker_context& ctx, http::request_context& rc, const std::string& lease,
                          const pop_params& p) {
    auto* pool = &ctx.pool;
    auto* notifier = &ctx.notifier;
    auto executor = rc.executor;
    rc.on_write_failed = [pool, notifier, executor, lease, group = p.consumer_group, queue = p.queue] {
        asio::co_spawn(executor, release_unwritten_lease(pool, notifier, lease, group, queue), asio::detached);
    };
}

}  // namespace

// GET /api/v1/pop/queue/:queue[/partition/:partition]
asio::awaitable<http::response> handle_pop(broker_context& ctx, http::request_context& rc) {
    std::optional<std::string> partition;
    if (rc.path_params.size() > 1) partition = rc.path_params[1];
    auto p = parse_pop(rc.path_params.at(0), partition, rc.query, ctx.limits, ctx.config.new_groups_from_beginning);
    p.queue = queue_key(rc.tenant, p.queue, "queue");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(p.timeout_ms);
    std::optional<long_poll> poll;
    if (p.wait) poll.emplace(ctx, rc, p.queue, deadline);

    // Pop maintenance: 204; a long-poll waits (up to its timeout) for maintenance to end.
    if (ctx.maintenance.pop_paused()) {
        const bool resumed =
            co_await ctx.maintenance.wait_pop_resumed(p.wait ? deadline : std::chrono::steady_clock::now());
        if (!resumed) co_return http::no_content();
    }

    if (poll) poll->park();
    for (;;) {
        std::optional<pop_result> result;
        if (poll) {
            poll->before_claim();
            result = co_await claim_while_parked(ctx, p, rc.tenant);
        } else {
            result = co_await pop_once(ctx, p, rc.tenant);
        }
        if (result) {
            record_claim(ctx.activity, ctx.prometheus, p.queue, p.consumer_group, result->counts);
            if (result->delivered.messages > 0) {
                record_pop(ctx.activity, ctx.prometheus, p.queue, p.consumer_group, p.auto_ack, result->delivered);
                if (poll) poll->finish();
                if (!result->lease_id.empty()) release_if_unwritten(ctx, rc, result->lease_id, p);
                co_return http::json_text(http::bhttp::status::ok, std::move(result->json));
            }
        }
        if (!poll || !co_await poll->wait_for_more()) break;
    }
    record_pop(ctx.activity, ctx.prometheus, p.queue, p.consumer_group, p.auto_ack, pop_delivery{});
    if (poll) poll->finish();
    co_return http::no_content();
}

}  // namespace queen::api
