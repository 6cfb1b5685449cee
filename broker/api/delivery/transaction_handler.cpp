#include "api/delivery/handlers.hpp"
#include "api/delivery/transaction_answer.hpp"
#include "api/shared/activity_recording.hpp"
#include "api/shared/opaque_span_offsets.hpp"
#include "api/shared/payload_encryption.hpp"
#include "api/shared/spool_push.hpp"
#include "api/shared/tenant_bytes_check.hpp"
#include "api/shared/tenant_names.hpp"
#include "api/shared/transaction_request.hpp"
#include "domain/message_id.hpp"
#include "http/responses.hpp"
#include "maintenance/maintenance_flags.hpp"
#include "segment/segment_codec.hpp"
#include "store/transaction_store.hpp"

#include <fmt/core.h>

#include <set>

namespace queen::api {

namespace asio = boost::asio;

namespace {

std::string describe_failure(const transaction_request& tx, const std::optional<store::transaction_failure>& failure,
                             const std::vector<std::size_t>& ack_op_index) {
    if (!failure) return "failed";
    if (failure->kind == "lease") return failure->error.empty() ? "a required lease is not held" : failure->error;
    const auto item = failure->item;
    std::size_t op = item >= 1 && item <= ack_op_index.size() ? ack_op_index[item - 1] : 0;
    const auto& a = tx.operations[op].ack;
    return fmt::format("operation {} (ack of transactionId {} on partition {}) failed: {}", op, a.transaction_id,
                       a.partition_id, failure->error.empty() ? std::string("failed") : failure->error);
}

// The acks of the transaction as queen.transaction takes them, in operation order.
std::vector<store::transaction_ack> transaction_acks(const transaction_request& tx,
                                                     const std::vector<std::size_t>& ack_op_index) {
    std::vector<store::transaction_ack> out;
    for (auto i : ack_op_index) {
        const auto& a = tx.operations[i].ack;
        std::optional<std::string> lease;
        if (a.lease_id && segment::parse_uuid(*a.lease_id))
            lease = *a.lease_id;
        else if (a.lease_id && !a.lease_id->empty())
            lease = "00000000-0000-0000-0000-000000000000";
        // A partition id that is no row id resolves nowhere (-1): the ack is unresolvable.
        const std::int64_t partition = parse_partition_id(a.partition_id).value_or(-1);
        out.push_back({a.consumer_group, {partition, a.transaction_id, a.offset, lease, to_sql(a.status), a.error}});
    }
    return out;
}

// A transaction's pushes cannot be spooled (they commit with its acks): while pushes go to
// the spool, a transaction that pushes answers 503 with Retry-After instead of overtaking
// spooled pushes. Ack-only transactions proceed.
void refuse_pushes_while_spooling(broker_context& ctx, const transaction_request& tx) {
    if (!push_goes_to_spool(ctx)) return;
    for (const auto& op : tx.operations)
        if (op.type == transaction_op::kind::push)
            throw api_error(error_code::unavailable,
                            ctx.maintenance.push_paused()
                                ? "push maintenance is on: a transaction that pushes cannot be accepted now"
                                : "this broker is draining its spool: a transaction that pushes cannot be "
                                  "accepted until it is empty",
                            1);
}

// queen.transaction through the store; acks the database cannot place by transaction id are
// resolved by the broker's own decoder (with_undecodable_spans_resolved).
asio::awaitable<store::transaction_outcome> run_transaction(
    broker_context& ctx, transaction_request& tx, const std::vector<const std::vector<domain::push_item>*>& pushes,
    const std::vector<std::size_t>& ack_op_index, const std::optional<std::string>& scope) {
    std::vector<ack_item*> acks;
    for (auto i : ack_op_index) acks.push_back(&tx.operations[i].ack);
    auto attempt = [&ctx, &tx, &pushes, &ack_op_index, &scope]() -> asio::awaitable<store::transaction_outcome> {
        const auto call = transaction_acks(tx, ack_op_index);
        co_return co_await store::run_transaction(ctx.pool, pushes, call, tx.required_leases, scope);
    };
    co_return co_await with_undecodable_spans_resolved(ctx.pool, std::move(acks), attempt);
}

}  // namespace

// POST /api/v1/transaction: pushes and acks in one PostgreSQL transaction.
asio::awaitable<http::response> handle_transaction(broker_context& ctx, http::request_context& rc) {
    auto tx = parse_transaction(rc.req.body(), ctx.limits);
    refuse_pushes_while_spooling(ctx, tx);
    if (tenant_bytes_limited(ctx)) {
        bool pushes_any = false;
        for (const auto& op : tx.operations)
            pushes_any = pushes_any || (op.type == transaction_op::kind::push && !op.items.empty());
        if (pushes_any) co_await refuse_past_tenant_bytes(ctx, rc.tenant);
    }
    for (auto& op : tx.operations) {
        if (op.type != transaction_op::kind::push) continue;
        key_queue_names(op.items, rc.tenant);
        stamp_producer(op.items, rc.subject);
        co_await seal_payloads(ctx, op.items);
    }

    std::vector<const std::vector<domain::push_item>*> pushes;
    std::vector<std::size_t> ack_op_index;  // ack k (1-based in SQL) -> operation index
    for (std::size_t i = 0; i < tx.operations.size(); ++i) {
        if (tx.operations[i].type == transaction_op::kind::push)
            pushes.push_back(&tx.operations[i].items);
        else
            ack_op_index.push_back(i);
    }
    const auto outcome = co_await run_transaction(ctx, tx, pushes, ack_op_index, rc.tenant.sql_scope());
    record_transaction(ctx.activity, ctx.prometheus, tx, outcome, ack_op_index);

    std::optional<std::string> error;
    if (!outcome.success) error = describe_failure(tx, outcome.failure, ack_op_index);
    auto answer = render_transaction_answer(tx, outcome, generate_uuid_v7(), error, rc.tenant);
    if (!answer.woken_queues.empty())
        ctx.notifier.queues_changed({answer.woken_queues.begin(), answer.woken_queues.end()});
    co_return http::json_text(http::bhttp::status::ok, std::move(answer.json));
}

}  // namespace queen::api
