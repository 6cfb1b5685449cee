#include "api/api_error.hpp"
#include "api/maintenance.hpp"
#include "api/payload_encryption.hpp"
#include "api/pop_answer.hpp"
#include "api/routes.hpp"
#include "core/message_id.hpp"
#include "core/wall_clock.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"
#include "maintenance/maintenance_flags.hpp"
#include "metrics/activity_counters.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "render/json_writer.hpp"
#include "segment/segment_codec.hpp"
#include "store/pop_store.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>


namespace queen::api {

namespace asio = boost::asio;

namespace {

// A rendered 200 answer, or no messages.
struct pop_result {
    std::string json;
    std::string lease_id;  // "" with autoAck
    std::size_t message_count = 0;
    std::int64_t lag_sum_ms = 0;  // Σ (now − createdAt) over the messages
    std::int64_t lag_max_ms = 0;
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
pop_result render_claimed(const app::broker_context& ctx, const pop_params& p, const store::claimed_spans& claimed) {
    pop_result r;
    r.counts = claimed.counts;
    const auto parts = partitions_of(claimed, r.lease_id);
    if (parts.empty()) return r;
    std::size_t stored = 0;
    for (const auto& seg : claimed.segments) stored += seg.body.size();
    render::json_writer out(expected_pop_answer_bytes(stored));
    const std::int64_t now_us = core::wall_clock_us();
    out.begin_object()
        .field("success", true)
        .field("queue", p.queue)
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
        auto segment = segment::decoded_segment::decode(seg.body);
        std::int64_t offset = seg.first_offset;
        for (const auto& f : segment.frames()) {
            if (offset > cp.span_start && offset <= cp.span_end &&
                !std::binary_search(seg.skip_offsets.begin(), seg.skip_offsets.end(), offset)) {
                ++r.message_count;
                const std::int64_t lag_ms = std::max<std::int64_t>(0, (now_us - f.created_at_us) / 1000);
                r.lag_sum_ms += lag_ms;
                r.lag_max_ms = std::max(r.lag_max_ms, lag_ms);
                if (crypto::payload_cipher::is_sealed(f.payload))
                    write_pop_message(out, scope, offset, f, deliverable_payload(ctx, f.payload, p.queue));
                else
                    write_pop_message(out, scope, offset, f, f.payload);
            }
            ++offset;
        }
    }
    out.end_array().end_object();
    r.json = out.take();
    return r;
}

// Claims spans through the store once and renders the messages of the claimed spans.
asio::awaitable<pop_result> pop_once(app::broker_context& ctx, const pop_params& p) {
    const store::pop_claim claim{p.queue,      p.partition, p.consumer_group, p.batch,
                                 p.partitions, p.auto_ack,  p.subscribe_all,  p.subscription_at};
    const auto claimed = co_await store::claim_spans(ctx.pool, claim);
    co_return render_claimed(ctx, p, claimed);
}

// Counts what one claim did besides handing out spans: a claim that hands out nothing may
// still have taken over leases or dead-lettered messages.
void record_claim(app::broker_context& ctx, const pop_params& p, const store::claim_counts& c) {
    ctx.prometheus.leases_expired(p.queue, p.consumer_group, c.leases_expired);
    ctx.prometheus.redelivered(p.queue, p.consumer_group, c.redelivered);
    ctx.prometheus.dead_lettered(p.queue, p.consumer_group, "lease_expired", c.lease_dead_letters);
    ctx.prometheus.dead_lettered(p.queue, p.consumer_group, "expired", c.expired_dead_letters);
    if (const auto dead = c.lease_dead_letters + c.expired_dead_letters; dead > 0) ctx.activity.dead_lettered(dead);
}

// State shared by a parked pop and the callbacks that wake it (all run on its strand).
struct park_state {
    explicit park_state(const asio::any_io_executor& ex) : timer(ex) {}
    asio::steady_timer timer;
    bool signaled = false;
    core::wake_reason reason = core::wake_reason::push;  // of the last signal
    bool client_gone = false;
};

// The queen_longpoll_wakeups_total reason of one wait that ended.
std::string_view wake_label(const park_state& s, bool past_deadline) {
    if (s.client_gone) return "disconnect";
    if (s.signaled) {
        switch (s.reason) {
            case core::wake_reason::push: return "push";
            case core::wake_reason::notify: return "notify";
            case core::wake_reason::recheck: return "recheck";
        }
    }
    return past_deadline ? "timeout" : "recheck";
}

// Releases the lease of a pop whose response could not be written, and wakes parked pops.
asio::awaitable<void> release_unwritten_lease(db::pg_pool* pool, core::push_notifier* notifier, std::string lease,
                                              std::string group, std::string queue) {
    try {
        co_await store::release_lease(*pool, lease, group);
        notifier->queues_changed({queue});
    } catch (const std::exception& e) {
        log::warn("could not release lease {} of an unwritten pop: {}", lease, e.what());
    }
}

// A pop whose answer cannot be written (client gone) gives its lease back at once.
void release_if_unwritten(app::broker_context& ctx, http::request_context& rc, const std::string& lease,
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
asio::awaitable<http::response> handle_pop(app::broker_context& ctx, http::request_context& rc) {
    std::optional<std::string> partition;
    if (rc.path_params.size() > 1) partition = rc.path_params[1];
    auto p = parse_pop(rc.path_params.at(0), partition, rc.query, ctx.limits, ctx.config.new_groups_from_beginning);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(p.timeout_ms);
    // A long-poll holds one of its client address's parking slots until it answers.
    std::optional<http::per_client_slots::slot> parking;
    if (p.wait) {
        parking = ctx.longpoll_slots.try_take(rc.client.address());
        if (!parking)
            throw api_error(error_code::too_many_requests,
                            "too many parked long-polls from this address (the limit is " +
                                std::to_string(ctx.longpoll_slots.limit()) + ")",
                            1);
    }

    // Pop maintenance: 204; a long-poll waits (up to its timeout) for maintenance to end.
    if (ctx.maintenance.pop_paused()) {
        const bool resumed =
            co_await ctx.maintenance.wait_pop_resumed(p.wait ? deadline : std::chrono::steady_clock::now());
        if (!resumed) co_return http::no_content();
    }

    auto state = std::make_shared<park_state>(rc.executor);
    std::uint64_t waiter = 0;
    if (p.wait) {
        auto executor = rc.executor;
        waiter = ctx.waiters.add(p.queue, [state, executor](core::wake_reason reason) {
            asio::post(executor, [state, reason] {
                state->signaled = true;
                state->reason = reason;
                state->timer.cancel();
            });
        });
        rc.client.notify_when_gone([state] {
            state->client_gone = true;
            state->timer.cancel();
        });
    }
    struct cleanup {
        app::broker_context& ctx;
        const std::string& queue;
        std::uint64_t waiter;
        http::client_presence& client;
        ~cleanup() {
            if (!waiter) return;
            ctx.waiters.remove(queue, waiter);
            client.stop_watching();
        }
    } guard{ctx, p.queue, waiter, rc.client};

    const auto parked_since = std::chrono::steady_clock::now();
    std::chrono::steady_clock::duration parked{};
    // A long-poll's wait ends with this pop: its parked time leaves the request's latency.
    auto end_wait = [&] {
        if (!p.wait) return;
        rc.parked = parked;
        ctx.prometheus.longpoll_waited(std::chrono::duration<double>(std::chrono::steady_clock::now() - parked_since).count());
    };
    for (;;) {
        state->signaled = false;
        auto result = co_await pop_once(ctx, p);
        record_claim(ctx, p, result.counts);
        if (result.message_count > 0) {
            const auto n = static_cast<std::int64_t>(result.message_count);
            ctx.activity.pop(p.queue, n, result.lag_sum_ms, result.lag_max_ms);
            ctx.prometheus.pop(p.queue, true);
            ctx.prometheus.delivered(p.queue, p.consumer_group, n);
            if (p.auto_ack) ctx.prometheus.acked(p.queue, p.consumer_group, n);
            end_wait();
            if (!result.lease_id.empty()) release_if_unwritten(ctx, rc, result.lease_id, p);
            co_return http::json_text(http::bhttp::status::ok, std::move(result.json));
        }
        if (!p.wait || state->client_gone || std::chrono::steady_clock::now() >= deadline) break;
        const auto wait_started = std::chrono::steady_clock::now();
        if (!state->signaled) {
            state->timer.expires_at(std::min(deadline, std::chrono::steady_clock::now() + ctx.config.longpoll_recheck));
            boost::system::error_code ec;
            co_await state->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        }
        parked += std::chrono::steady_clock::now() - wait_started;
        ctx.prometheus.longpoll_woken(wake_label(*state, std::chrono::steady_clock::now() >= deadline));
        if (state->client_gone) break;
    }
    ctx.activity.pop_empty(p.queue);
    ctx.prometheus.pop(p.queue, false);
    end_wait();
    co_return http::no_content();
}

}  // namespace queen::api
