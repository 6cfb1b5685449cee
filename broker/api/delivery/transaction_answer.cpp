#include "api/delivery/transaction_answer.hpp"

#include "domain/message_id.hpp"
#include "render/json_writer.hpp"

#include <vector>

namespace queen::api {

namespace {

constexpr const char* rolled_back = "not applied: the transaction was rolled back";

void write_push_result(render::json_writer& out, std::size_t index, const domain::push_item& item,
                       const std::optional<domain::push_outcome>& row, const domain::tenant_scope& scope) {
    out.begin_object().field("index", index).field("type", "push").field("transactionId", item.transaction_id);
    out.field("queueName", scope.local(item.queue)).field("success", row.has_value());
    if (!row) {
        out.field("error", rolled_back).end_object();
        return;
    }
    out.field("status", row->queued ? "queued" : "duplicate")
        .field("messageId", domain::message_id(row->partition_id, row->offset))
        .field("partitionId", std::to_string(row->partition_id))
        .field("error", nullptr)
        .end_object();
}

void write_ack_result(render::json_writer& out, std::size_t index, const ack_item& ack, const store::ack_outcome* row) {
    out.begin_object().field("index", index).field("type", "ack").field("transactionId", ack.transaction_id);
    out.field("partitionId", ack.partition_id);
    if (!row) {
        out.field("success", false).field("error", rolled_back).end_object();
        return;
    }
    out.field("success", row->success).field("error", row->error);
    if (row->dlq) out.field("dlq", true);
    if (row->noop) out.field("noop", true);
    out.end_object();
}

}  // namespace

transaction_answer render_transaction_answer(const transaction_request& tx, const store::transaction_outcome& outcome,
                                             const std::string& transaction_id, const std::optional<std::string>& error,
                                             const domain::tenant_scope& scope) {
    // The store's ack rows in operation order.
    std::size_t acks = 0;
    for (const auto& op : tx.operations)
        if (op.type != transaction_op::kind::push) ++acks;
    std::vector<const store::ack_outcome*> ack_rows(acks, nullptr);
    for (const auto& row : outcome.ack)
        if (row.item >= 1 && row.item <= ack_rows.size()) ack_rows[row.item - 1] = &row;

    transaction_answer answer;
    render::json_writer out;
    out.begin_object().field("transactionId", transaction_id).field("success", outcome.success).key("results");
    out.begin_array();
    std::size_t index = 0, push_op = 0, ack_op = 0;
    for (const auto& op : tx.operations) {
        if (op.type == transaction_op::kind::push) {
            for (std::size_t i = 0; i < op.items.size(); ++i) {
                const auto& row = outcome.push.at(push_op).at(i);
                write_push_result(out, index++, op.items[i], row, scope);
                if (outcome.success && row && row->queued) answer.woken_queues.insert(op.items[i].queue);
            }
            ++push_op;
        } else {
            const auto* row = ack_rows[ack_op++];
            write_ack_result(out, index++, op.ack, row);
            if (outcome.success && row && row->lease_released && row->queue_name)
                answer.woken_queues.insert(*row->queue_name);
        }
    }
    out.end_array();
    if (error) out.field("error", *error);
    answer.json = out.end_object().take();
    return answer;
}

}  // namespace queen::api
