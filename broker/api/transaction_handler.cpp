#include "api/json_text.hpp"
#include "api/opaque_span_offsets.hpp"
#include "api/payload_encryption.hpp"
#include "api/routes.hpp"
#include "api/transaction_request.hpp"
#include "core/message_id.hpp"
#include "core/push_batch.hpp"
#include "db/pg_array.hpp"
#include "db/pg_error.hpp"
#include "http/responses.hpp"
#include "segment/segment_codec.hpp"

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

std::string describe_failure(const transaction_request& tx, const json& failure,
                             const std::vector<std::size_t>& ack_op_index) {
    if (failure.value("kind", "") == "lease") return failure.value("error", "a required lease is not held");
    auto item = failure.value("item", 0);
    std::size_t op = item >= 1 && static_cast<std::size_t>(item) <= ack_op_index.size() ? ack_op_index[item - 1] : 0;
    const auto& a = tx.operations[op].ack;
    return fmt::format("operation {} (ack of transactionId {} on partition {}) failed: {}", op, a.transaction_id,
                       a.partition_id, failure.value("error", std::string("failed")));
}

// The eight ack arrays of queen.transaction (group, partition, transaction id, offset, lease,
// status, error per ack; then the required leases).
std::vector<std::string> transaction_ack_arrays(const transaction_request& tx, const std::vector<std::size_t>& ack_op_index) {
    db::pg_array_builder groups, pids, txids, offsets, leases, statuses, errors, required;
    for (auto i : ack_op_index) {
        const auto& a = tx.operations[i].ack;
        groups.add(a.consumer_group);
        pids.add(partition_id_or_unknown(a.partition_id));
        txids.add(a.transaction_id);
        if (a.offset) offsets.add(*a.offset);
        else offsets.add_null();
        if (a.lease_id && segment::parse_uuid(*a.lease_id)) leases.add(*a.lease_id);
        else if (a.lease_id && !a.lease_id->empty()) leases.add(std::string_view("00000000-0000-0000-0000-000000000000"));
        else leases.add_null();
        statuses.add(std::string_view(to_sql(a.status)));
        if (a.error) errors.add(*a.error);
        else errors.add_null();
    }
    for (const auto& l : tx.required_leases) required.add(l);
    return {groups.finish(), pids.finish(), txids.finish(), offsets.finish(),
            leases.finish(), statuses.finish(), errors.finish(), required.finish()};
}

}  // namespace

// POST /api/v1/transaction: pushes and acks in one PostgreSQL transaction.
asio::awaitable<http::response> handle_transaction(app::broker_context& ctx, http::request_context& rc) {
    auto body = parse_json_body(rc.req.body(), ctx.limits);
    auto tx = parse_transaction(body, ctx.limits);
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
    std::optional<db::pg_result> res;
    for (int attempt = 0; !res; ++attempt) {
        const std::vector<std::string> ack_arrays = transaction_ack_arrays(tx, ack_op_index);
        std::vector<db::pg_param> params;
        for (const auto& a : batch.arrays) params.push_back(db::pg_param::text(a));
        for (const auto& a : ack_arrays) params.push_back(db::pg_param::text(a));
        bool undecodable = false;
        try {
            res = co_await ctx.pool.exec(
                "SELECT queen.transaction($1::text[], $2::text[], $3::int[], $4::text[], $5::uuid[], $6::text[], "
                "$7::text[], $8::text[], $9::bigint[], $10::text[], $11::bigint[], $12::uuid[], $13::text[], "
                "$14::text[], $15::uuid[])",
                params);
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
    const json outcome = json::parse(res->text(0, 0));
    const bool success = outcome.value("success", false);

    // Per push item and per ack, in operation order.
    std::vector<std::vector<const json*>> push_rows(pushes.size());
    for (std::size_t r = 0; r < pushes.size(); ++r) push_rows[r].resize(pushes[r]->size(), nullptr);
    for (const auto& row : outcome["push"]) {
        auto k = row["item"].get<std::size_t>();
        if (k >= 1 && k <= batch.position.size()) {
            auto [r, i] = batch.position[k - 1];
            push_rows[r][i] = &row;
        }
    }
    std::vector<const json*> ack_rows(ack_op_index.size(), nullptr);
    for (const auto& row : outcome["ack"]) {
        auto k = row["item"].get<std::size_t>();
        if (k >= 1 && k <= ack_rows.size()) ack_rows[k - 1] = &row;
    }

    json results = json::array();
    std::set<std::string> woken;
    std::size_t push_op = 0, ack_op = 0;
    for (const auto& op : tx.operations) {
        if (op.type == transaction_op::kind::push) {
            for (std::size_t i = 0; i < op.items.size(); ++i) {
                const auto& item = op.items[i];
                const json* row = push_rows[push_op][i];
                json r{{"index", results.size()}, {"type", "push"}, {"transactionId", item.transaction_id},
                       {"queueName", item.queue}};
                if (row) {
                    r["success"] = true;
                    r["status"] = (*row)["status"];
                    r["messageId"] = core::message_id((*row)["partition_id"].get<std::int64_t>(),
                                                      (*row)["offset"].get<std::int64_t>());
                    r["partitionId"] = std::to_string((*row)["partition_id"].get<std::int64_t>());
                    r["error"] = nullptr;
                    if (success && (*row)["status"] == "queued") woken.insert(item.queue);
                } else {
                    r["success"] = false;
                    r["error"] = "not applied: the transaction was rolled back";
                }
                results.push_back(std::move(r));
            }
            ++push_op;
        } else {
            const json* row = ack_rows[ack_op++];
            json r{{"index", results.size()}, {"type", "ack"}, {"transactionId", op.ack.transaction_id},
                   {"partitionId", op.ack.partition_id}};
            if (row) {
                r["success"] = (*row)["success"];
                r["error"] = (*row)["error"];
                if ((*row)["dlq"].get<bool>()) r["dlq"] = true;
                if ((*row)["noop"].get<bool>()) r["noop"] = true;
                if (success && (*row)["lease_released"].get<bool>() && (*row)["queue_name"].is_string())
                    woken.insert((*row)["queue_name"].get<std::string>());
            } else {
                r["success"] = false;
                r["error"] = "not applied: the transaction was rolled back";
            }
            results.push_back(std::move(r));
        }
    }
    if (!woken.empty()) ctx.notifier.queues_changed({woken.begin(), woken.end()});

    json out{{"transactionId", generate_uuid_v7()}, {"success", success}, {"results", results}};
    if (!success) out["error"] = describe_failure(tx, outcome["failure"], ack_op_index);
    co_return http::json(http::bhttp::status::ok, out);
}

}  // namespace queen::api
