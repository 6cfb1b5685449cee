#include "api/json_text.hpp"
#include "api/maintenance.hpp"
#include "api/opaque_span_offsets.hpp"
#include "api/payload_encryption.hpp"
#include "api/routes.hpp"
#include "api/transaction_request.hpp"
#include "core/message_id.hpp"
#include "core/push_batch.hpp"
#include "db/pg_error.hpp"
#include "http/responses.hpp"
#include "maintenance/maintenance_flags.hpp"
#include "segment/segment_codec.hpp"
#include "store/transaction_store.hpp"

#include <fmt/core.h>

#include <charconv>
#include <set>

namespace queen::api {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

std::int64_t partition_id_or_unknown(const std::string& s) {
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || ptr != s.data() + s.size() || v <= 0) return -1;  // resolves nowhere
    return v;
}

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
        if (a.lease_id && segment::parse_uuid(*a.lease_id)) lease = *a.lease_id;
        else if (a.lease_id && !a.lease_id->empty()) lease = "00000000-0000-0000-0000-000000000000";
        out.push_back({a.consumer_group,
                       {partition_id_or_unknown(a.partition_id), a.transaction_id, a.offset, lease, to_sql(a.status),
                        a.error}});
    }
    return out;
}

// A transaction's pushes cannot be spooled (they commit with its acks): while pushes go to
// the spool, a transaction that pushes answers 503 with Retry-After instead of overtaking
// spooled pushes. Ack-only transactions proceed.
void refuse_pushes_while_spooling(app::broker_context& ctx, const transaction_request& tx) {
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

}  // namespace

// POST /api/v1/transaction: pushes and acks in one PostgreSQL transaction.
asio::awaitable<http::response> handle_transaction(app::broker_context& ctx, http::request_context& rc) {
    auto body = parse_json_body(rc.req.body(), ctx.limits);
    auto tx = parse_transaction(body, ctx.limits);
    refuse_pushes_while_spooling(ctx, tx);
    for (auto& op : tx.operations)
        if (op.type == transaction_op::kind::push) co_await seal_payloads(ctx, op.items);

    std::vector<const std::vector<core::push_item>*> pushes;
    std::vector<std::size_t> ack_op_index;  // ack k (1-based in SQL) -> operation index
    for (std::size_t i = 0; i < tx.operations.size(); ++i) {
        if (tx.operations[i].type == transaction_op::kind::push) pushes.push_back(&tx.operations[i].items);
        else ack_op_index.push_back(i);
    }
    const core::push_batch batch = core::make_push_batch(pushes);

    // An ack by transaction id that the database cannot place (QNDEC: a zstd segment without
    // queen_ext) voids the attempt; the broker decodes those spans itself and tries again.
    std::optional<store::transaction_outcome> outcome;
    for (int attempt = 0; !outcome; ++attempt) {
        bool undecodable = false;
        try {
            const auto acks = transaction_acks(tx, ack_op_index);
            outcome = co_await store::run_transaction(ctx.pool, batch, acks, tx.required_leases);
        } catch (const db::pg_error& e) {
            if (attempt > 0 || e.sqlstate() != undecodable_span_sqlstate) throw;
            undecodable = true;
        }
        if (undecodable) {
            std::vector<ack_item*> acks;
            for (auto i : ack_op_index) acks.push_back(&tx.operations[i].ack);
            co_await resolve_offsets_in_undecodable_spans(ctx.pool, std::move(acks));
        }
    }
    const bool success = outcome->success;

    // Per push item and per ack, in operation order.
    std::vector<std::vector<const store::transaction_push_row*>> push_rows(pushes.size());
    for (std::size_t r = 0; r < pushes.size(); ++r) push_rows[r].resize(pushes[r]->size(), nullptr);
    for (const auto& row : outcome->push) {
        if (row.item >= 1 && row.item <= batch.position.size()) {
            auto [r, i] = batch.position[row.item - 1];
            push_rows[r][i] = &row;
        }
    }
    std::vector<const store::ack_outcome*> ack_rows(ack_op_index.size(), nullptr);
    for (const auto& row : outcome->ack)
        if (row.item >= 1 && row.item <= ack_rows.size()) ack_rows[row.item - 1] = &row;

    json results = json::array();
    std::set<std::string> woken;
    std::size_t push_op = 0, ack_op = 0;
    for (const auto& op : tx.operations) {
        if (op.type == transaction_op::kind::push) {
            for (std::size_t i = 0; i < op.items.size(); ++i) {
                const auto& item = op.items[i];
                const auto* row = push_rows[push_op][i];
                json r{{"index", results.size()}, {"type", "push"}, {"transactionId", item.transaction_id},
                       {"queueName", item.queue}};
                if (row) {
                    r["success"] = true;
                    r["status"] = row->status;
                    r["messageId"] = core::message_id(row->partition_id, row->offset);
                    r["partitionId"] = std::to_string(row->partition_id);
                    r["error"] = nullptr;
                    if (success && row->status == "queued") woken.insert(item.queue);
                } else {
                    r["success"] = false;
                    r["error"] = "not applied: the transaction was rolled back";
                }
                results.push_back(std::move(r));
            }
            ++push_op;
        } else {
            const auto* row = ack_rows[ack_op++];
            json r{{"index", results.size()}, {"type", "ack"}, {"transactionId", op.ack.transaction_id},
                   {"partitionId", op.ack.partition_id}};
            if (row) {
                r["success"] = row->success;
                r["error"] = row->error ? json(*row->error) : json();
                if (row->dlq) r["dlq"] = true;
                if (row->noop) r["noop"] = true;
                if (success && row->lease_released && row->queue_name) woken.insert(*row->queue_name);
            } else {
                r["success"] = false;
                r["error"] = "not applied: the transaction was rolled back";
            }
            results.push_back(std::move(r));
        }
    }
    if (!woken.empty()) ctx.notifier.queues_changed({woken.begin(), woken.end()});

    json out{{"transactionId", generate_uuid_v7()}, {"success", success}, {"results", results}};
    if (!success) out["error"] = describe_failure(tx, outcome->failure, ack_op_index);
    co_return http::json(http::bhttp::status::ok, out);
}

}  // namespace queen::api
