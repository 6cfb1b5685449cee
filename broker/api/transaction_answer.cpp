#include "api/transaction_answer.hpp"

#include "core/message_id.hpp"

#include <vector>

namespace queen::api {

namespace {

using nlohmann::json;

constexpr const char* rolled_back = "not applied: the transaction was rolled back";

json push_result(std::size_t index, const core::push_item& item, const store::transaction_push_row* row) {
    json r{{"index", index}, {"type", "push"}, {"transactionId", item.transaction_id}, {"queueName", item.queue}};
    if (!row) {
        r["success"] = false;
        r["error"] = rolled_back;
        return r;
    }
    r["success"] = true;
    r["status"] = row->status;
    r["messageId"] = core::message_id(row->partition_id, row->offset);
    r["partitionId"] = std::to_string(row->partition_id);
    r["error"] = nullptr;
    return r;
}

json ack_result(std::size_t index, const ack_item& ack, const store::ack_outcome* row) {
    json r{{"index", index}, {"type", "ack"}, {"transactionId", ack.transaction_id}, {"partitionId", ack.partition_id}};
    if (!row) {
        r["success"] = false;
        r["error"] = rolled_back;
        return r;
    }
    r["success"] = row->success;
    r["error"] = row->error ? json(*row->error) : json();
    if (row->dlq) r["dlq"] = true;
    if (row->noop) r["noop"] = true;
    return r;
}

}  // namespace

transaction_results render_transaction_results(const transaction_request& tx, const core::push_batch& batch,
                                               const store::transaction_outcome& outcome) {
    // The store's rows by (push operation, item) and by ack, in operation order.
    std::vector<std::vector<const store::transaction_push_row*>> push_rows;
    std::size_t acks = 0;
    for (const auto& op : tx.operations) {
        if (op.type == transaction_op::kind::push) push_rows.emplace_back(op.items.size(), nullptr);
        else ++acks;
    }
    for (const auto& row : outcome.push) {
        if (row.item < 1 || row.item > batch.position.size()) continue;
        auto [r, i] = batch.position[row.item - 1];
        push_rows[r][i] = &row;
    }
    std::vector<const store::ack_outcome*> ack_rows(acks, nullptr);
    for (const auto& row : outcome.ack)
        if (row.item >= 1 && row.item <= ack_rows.size()) ack_rows[row.item - 1] = &row;

    transaction_results out;
    std::size_t push_op = 0, ack_op = 0;
    for (const auto& op : tx.operations) {
        if (op.type == transaction_op::kind::push) {
            for (std::size_t i = 0; i < op.items.size(); ++i) {
                const auto* row = push_rows[push_op][i];
                out.results.push_back(push_result(out.results.size(), op.items[i], row));
                if (outcome.success && row && row->status == "queued") out.woken_queues.insert(op.items[i].queue);
            }
            ++push_op;
        } else {
            const auto* row = ack_rows[ack_op++];
            out.results.push_back(ack_result(out.results.size(), op.ack, row));
            if (outcome.success && row && row->lease_released && row->queue_name)
                out.woken_queues.insert(*row->queue_name);
        }
    }
    return out;
}

}  // namespace queen::api
