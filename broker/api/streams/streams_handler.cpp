#include "api/shared/activity_recording.hpp"
#include "api/shared/opaque_span_offsets.hpp"
#include "api/shared/payload_encryption.hpp"
#include "api/shared/push_answers.hpp"
#include "api/shared/spool_push.hpp"
#include "api/shared/tenant_bytes_check.hpp"
#include "api/shared/tenant_names.hpp"
#include "api/streams/handlers.hpp"
#include "api/streams/stream_requests.hpp"
#include "domain/message_id.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"
#include "maintenance/maintenance_flags.hpp"
#include "render/json_writer.hpp"
#include "store/streams_store.hpp"

#include <fmt/core.h>

#include <chrono>

namespace queen::api {

namespace asio = boost::asio;

namespace {

// The answer of a cycle that changed nothing.
http::response cycle_failure(const stream_cycle_request& req, std::string_view error) {
    render::json_writer out;
    out.begin_object()
        .field("success", false)
        .field("query_id", req.query_id)
        .field("partition_id", req.partition_id)
        .field("state_ops_applied", 0)
        .key("push_results")
        .begin_array()
        .end_array()
        .field("ack_result", nullptr)
        .field("error", error)
        .end_object();
    return http::json_text(http::bhttp::status::ok, out.take());
}

// A cycle's pushes cannot be spooled (they commit with its ack and state): while pushes go to
// the spool, a cycle that pushes answers 503 with Retry-After, which the SDK retries.
void refuse_pushes_while_spooling(broker_context& ctx, const store::stream_cycle_call& call) {
    if (call.push_items.empty() || !push_goes_to_spool(ctx)) return;
    throw api_error(error_code::unavailable,
                    ctx.maintenance.push_paused()
                        ? "push maintenance is on: a cycle that pushes cannot be accepted now"
                        : "this broker is draining its spool: a cycle that pushes cannot be accepted until it is empty",
                    1);
}

// queen.stream_cycle through the store; an ack the database cannot place by transaction id is
// resolved by the broker's own decoder (with_undecodable_spans_resolved).
asio::awaitable<store::stream_cycle_outcome> run_cycle(broker_context& ctx, store::stream_cycle_call& call,
                                                       const std::optional<std::string>& scope) {
    ack_item probe;
    std::vector<ack_item*> acks;
    if (call.ack) {
        probe.transaction_id = call.ack->transaction_id;
        probe.partition_id = std::to_string(call.partition_id);
        probe.consumer_group = call.consumer_group;
        probe.lease_id = call.ack->lease_id;
        acks.push_back(&probe);
    }
    auto attempt = [&ctx, &call, &probe, &scope]() -> asio::awaitable<store::stream_cycle_outcome> {
        if (call.ack && probe.offset) call.ack->offset = probe.offset;
        co_return co_await store::run_stream_cycle(ctx.pool, call, scope);
    };
    co_return co_await with_undecodable_spans_resolved(ctx.pool, std::move(acks), attempt);
}

// Activity and Prometheus counts of a committed cycle: its state ops, its stored pushes and its
// ack (none for a replay, which applied nothing).
void record_cycle(broker_context& ctx, const store::stream_cycle_call& call,
                  const std::vector<domain::push_item>& items, const store::stream_cycle_outcome& outcome,
                  double seconds) {
    if (!outcome.applied) {
        ctx.prometheus.stream_cycle(true, 0, 0, 0, seconds);
        return;
    }
    std::int64_t upserts = 0;
    for (const auto& op : call.state_ops) upserts += op.upsert ? 1 : 0;
    ctx.prometheus.stream_cycle(true, upserts, static_cast<std::int64_t>(call.state_ops.size()) - upserts,
                                static_cast<std::int64_t>(items.size()), seconds);
    if (!items.empty()) record_push(ctx.activity, ctx.prometheus, items, outcome.push);
    if (!call.ack || !outcome.acked || outcome.ack_noop) return;
    ack_item a;
    a.transaction_id = call.ack->transaction_id;
    a.partition_id = std::to_string(call.partition_id);
    a.status = call.ack->dead_letter ? ack_status::dlq : ack_status::completed;
    a.consumer_group = call.consumer_group;
    store::ack_outcome o;
    o.item = 1;
    o.success = true;
    o.dlq = outcome.ack_dlq;
    o.lease_released = outcome.lease_released;
    o.queue_name = outcome.source_queue;
    record_acks(ctx.activity, ctx.prometheus, {a}, {o});
}

}  // namespace

// POST /streams/v1/queries: registers a query by name, idempotently.
asio::awaitable<http::response> handle_stream_register(broker_context& ctx, http::request_context& rc) {
    const auto req = parse_stream_register(rc.req.body(), ctx.limits);
    // The query's name is a key in its tenant, like a queue's.
    const std::string name = queue_key(rc.tenant, req.name, "name");
    const std::string source = queue_key(rc.tenant, req.source_queue, "source_queue");
    std::optional<std::string> sink;
    if (req.sink_queue) sink = queue_key(rc.tenant, *req.sink_queue, "sink_queue");
    const auto reg = co_await store::register_stream_query(ctx.pool, name, source, sink, req.config_hash, req.reset);
    render::json_writer out;
    out.begin_object().field("success", !reg.conflict).field("query_id", reg.query_id).field("name", req.name);
    if (reg.conflict) {
        out.field("error", fmt::format("config_hash mismatch: query {} is registered with another config_hash; "
                                       "register with reset:true to drop its state and use the new one",
                                       req.name))
            .end_object();
        co_return http::json_text(http::bhttp::status::conflict, out.take());
    }
    out.field("config_hash", req.config_hash).field("fresh", reg.fresh).field("reset", reg.reset).end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

// POST /streams/v1/state/get: a lane's state rows, sorted by key, whole or refused (413, by the
// database before it sends a row).
asio::awaitable<http::response> handle_stream_state_get(broker_context& ctx, http::request_context& rc) {
    const auto req = parse_stream_state_get(rc.req.body(), ctx.limits);
    std::vector<store::stream_state_row> rows;
    if (req.partition_id)
        rows =
            co_await store::stream_state(ctx.pool, req.query_id, *req.partition_id, req.filter, rc.tenant.sql_scope());
    std::size_t bytes = 0;
    for (const auto& r : rows) bytes += r.key.size() + r.value.size();
    render::json_writer out(bytes + 64 * rows.size() + 64);
    out.begin_object().field("success", true).key("rows").begin_array();
    for (const auto& r : rows)
        out.begin_object()
            .field("key", r.key)
            .raw_field("value", r.value)
            .field("updated_at", domain::iso_time(r.updated_at_us))
            .end_object();
    out.end_array().end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

// POST /streams/v1/cycle: state ops, sink pushes and the source ack in one transaction.
asio::awaitable<http::response> handle_stream_cycle(broker_context& ctx, http::request_context& rc) {
    auto req = parse_stream_cycle(rc.req.body(), ctx.limits);
    if (req.refusal) {
        ctx.prometheus.stream_cycle(false, 0, 0, 0, std::nullopt);
        co_return cycle_failure(req, *req.refusal);
    }
    auto& call = req.call;
    key_queue_names(call.push_items, rc.tenant);
    refuse_pushes_while_spooling(ctx, call);
    if (!call.push_items.empty() && tenant_bytes_limited(ctx)) co_await refuse_past_tenant_bytes(ctx, rc.tenant);
    stamp_producer(call.push_items, rc.subject);
    co_await seal_payloads(ctx, call.push_items);

    store::stream_cycle_outcome outcome;
    const auto started = std::chrono::steady_clock::now();
    try {
        outcome = co_await run_cycle(ctx, call, rc.tenant.sql_scope());
    } catch (const db::pg_error& e) {
        // Lost connections and timeouts are answered 503 (retried by the SDK) by the route's
        // failure answer, a domain error raised outside the cycle's own checks (a shard proxy's
        // 409 or 503, docs/scaling.md) with its status; any other database error fails the
        // cycle, which rolled back.
        if (e.kind() == db::pg_error_kind::connection_lost || e.kind() == db::pg_error_kind::timed_out ||
            e.kind() == db::pg_error_kind::raised)
            throw;
        log::error("POST /streams/v1/cycle: database error {}: {}", e.sqlstate(), e.what());
        outcome.success = false;
        outcome.error = "the database failed the cycle; nothing was applied";
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!outcome.success) {
        ctx.prometheus.stream_cycle(false, 0, 0, 0, seconds);
        co_return cycle_failure(req, outcome.error);
    }
    record_cycle(ctx, call, call.push_items, outcome, seconds);

    // A replay answers no push results: it pushed nothing.
    auto answered = outcome.applied ? call.push_items : std::vector<domain::push_item>{};
    for (std::size_t i = 0; i < answered.size(); ++i) answered[i].transaction_id = outcome.push_transaction_ids[i];
    std::vector<std::string> woken;
    for (std::size_t i = 0; i < answered.size(); ++i)
        if (outcome.push[i].queued) woken.push_back(answered[i].queue);
    if (outcome.lease_released && outcome.source_queue) woken.push_back(*outcome.source_queue);
    if (!woken.empty()) ctx.notifier.queues_changed(woken);

    render::json_writer out;
    out.begin_object()
        .field("success", true)
        .field("query_id", req.query_id)
        .field("partition_id", req.partition_id)
        .field("applied", outcome.applied)
        .field("queueName", local_name(outcome.source_queue, rc.tenant))
        .field("state_ops_applied", outcome.state_ops_applied)
        .raw_field("push_results", render_push_answers(answered, outcome.push, rc.tenant))
        .key("ack_result");
    if (call.ack)
        out.begin_object()
            .field("success", true)
            .field("count", req.ack_count)
            .field("lease_released", outcome.lease_released)
            .field("dlq", outcome.ack_dlq)
            .end_object();
    else
        out.value(nullptr);
    out.end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

}  // namespace queen::api
