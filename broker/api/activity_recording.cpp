#include "api/activity_recording.hpp"

#include <map>
#include <set>
#include <string>

namespace queen::api {

namespace {

struct ack_tally {
    std::int64_t success = 0, failed = 0;
};

// Adds one applied ack to its queue's tally.
void tally_ack(std::map<std::string, ack_tally>& by_queue, const ack_item& item, const store::ack_outcome& a) {
    if (!a.success || a.noop || !a.queue_name) return;
    auto& t = by_queue[*a.queue_name];
    if (item.status == ack_status::completed) ++t.success;
    else ++t.failed;
}

// Counts one applied ack in the Prometheus families of its (queue, group).
void count_ack(metrics::prometheus_metrics& prometheus, const ack_item& item, const store::ack_outcome& a) {
    if (!a.success || a.noop || !a.queue_name) return;
    const auto& queue = *a.queue_name;
    if (item.status == ack_status::completed) prometheus.acked(queue, item.consumer_group, 1);
    else if (item.status != ack_status::dlq) prometheus.nacked(queue, item.consumer_group, to_sql(item.status), 1);
    if (a.dlq)
        prometheus.dead_lettered(queue, item.consumer_group, item.status == ack_status::dlq ? "dlq" : "retries", 1);
}

void record_ack_tallies(metrics::activity_counters& activity, const std::map<std::string, ack_tally>& by_queue,
                        const std::set<std::string>& seen_queues) {
    for (const auto& queue : seen_queues) {
        auto it = by_queue.find(queue);
        const ack_tally t = it == by_queue.end() ? ack_tally{} : it->second;
        activity.ack(queue, t.success, t.failed, true);
    }
}

}  // namespace

void record_push(metrics::activity_counters& activity, metrics::prometheus_metrics& prometheus,
                 const std::vector<core::push_item>& items, const std::vector<core::push_outcome>& outcomes) {
    activity.push_request_total();
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> by_queue;  // stored, duplicates
    for (std::size_t i = 0; i < items.size() && i < outcomes.size(); ++i) {
        auto& [stored, duplicates] = by_queue[items[i].queue];
        ++(outcomes[i].queued ? stored : duplicates);
    }
    for (const auto& [queue, n] : by_queue) {
        activity.push_request(queue, n.first);
        prometheus.published(queue, n.first);
        prometheus.duplicates(queue, n.second);
    }
}

void record_acks(metrics::activity_counters& activity, metrics::prometheus_metrics& prometheus,
                 const std::vector<ack_item>& acks, const std::vector<store::ack_outcome>& answers) {
    activity.ack_request_total(static_cast<std::int64_t>(acks.size()));
    std::map<std::string, ack_tally> by_queue;
    std::set<std::string> seen;
    std::int64_t dead_lettered = 0;
    for (std::size_t i = 0; i < acks.size() && i < answers.size(); ++i) {
        tally_ack(by_queue, acks[i], answers[i]);
        count_ack(prometheus, acks[i], answers[i]);
        if (answers[i].queue_name) seen.insert(*answers[i].queue_name);
        if (answers[i].dlq) ++dead_lettered;
    }
    record_ack_tallies(activity, by_queue, seen);
    if (dead_lettered > 0) activity.dead_lettered(dead_lettered);
}

void record_transaction(metrics::activity_counters& activity, metrics::prometheus_metrics& prometheus,
                        const transaction_request& tx,
                        const core::push_batch& batch, const store::transaction_outcome& outcome,
                        const std::vector<std::size_t>& ack_op_index) {
    activity.transaction_total();
    if (!outcome.success) return;
    std::vector<const std::vector<core::push_item>*> pushes;  // batch.position's request indexes
    for (const auto& op : tx.operations)
        if (op.type == transaction_op::kind::push) pushes.push_back(&op.items);
    std::set<std::string> touched;
    std::map<std::string, std::int64_t> stored, duplicates;
    for (const auto& row : outcome.push) {
        if (row.item == 0 || row.item > batch.position.size()) continue;
        const auto [request, item] = batch.position[row.item - 1];
        if (request >= pushes.size() || item >= pushes[request]->size()) continue;
        const auto& queue = (*pushes[request])[item].queue;
        touched.insert(queue);
        if (row.status == "queued") ++stored[queue];
        else if (row.status == "duplicate") ++duplicates[queue];
    }
    for (const auto& [queue, n] : stored) prometheus.published(queue, n);
    for (const auto& [queue, n] : duplicates) prometheus.duplicates(queue, n);
    if (!stored.empty() || !touched.empty()) activity.push_request_total();
    for (const auto& queue : touched) activity.push_request(queue, stored[queue]);
    if (!ack_op_index.empty()) {
        activity.ack_request_total(static_cast<std::int64_t>(ack_op_index.size()));
        std::map<std::string, ack_tally> by_queue;
        std::int64_t dead_lettered = 0;
        for (const auto& a : outcome.ack) {
            if (a.item == 0 || a.item > ack_op_index.size()) continue;
            tally_ack(by_queue, tx.operations[ack_op_index[a.item - 1]].ack, a);
            count_ack(prometheus, tx.operations[ack_op_index[a.item - 1]].ack, a);
            if (a.queue_name) touched.insert(*a.queue_name);
            if (a.dlq) ++dead_lettered;
        }
        std::set<std::string> ack_queues;
        for (const auto& [queue, t] : by_queue) ack_queues.insert(queue);
        record_ack_tallies(activity, by_queue, ack_queues);
        if (dead_lettered > 0) activity.dead_lettered(dead_lettered);
    }
    for (const auto& queue : touched) activity.transaction(queue);
}

}  // namespace queen::api
