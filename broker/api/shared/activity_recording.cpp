#include "api/shared/activity_recording.hpp"

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
    if (item.status == ack_status::completed)
        ++t.success;
    else
        ++t.failed;
}

// Counts one applied ack in the Prometheus families of its (queue, group).
void count_ack(metrics::prometheus_metrics& prometheus, const ack_item& item, const store::ack_outcome& a) {
    if (!a.success || a.noop || !a.queue_name) return;
    const auto& queue = *a.queue_name;
    if (item.status == ack_status::completed)
        prometheus.acked(queue, item.consumer_group, 1);
    else if (item.status != ack_status::dlq)
        prometheus.nacked(queue, item.consumer_group, to_sql(item.status), 1);
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
                 const std::vector<domain::push_item>& items, const std::vector<domain::push_outcome>& outcomes) {
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

void record_claim(metrics::activity_counters& activity, metrics::prometheus_metrics& prometheus,
                  const std::string& queue, const std::string& group, const store::claim_counts& c) {
    prometheus.leases_expired(queue, group, c.leases_expired);
    prometheus.redelivered(queue, group, c.redelivered);
    prometheus.dead_lettered(queue, group, "lease_expired", c.lease_dead_letters);
    prometheus.dead_lettered(queue, group, "expired", c.expired_dead_letters);
    if (const auto dead = c.lease_dead_letters + c.expired_dead_letters; dead > 0) activity.dead_lettered(dead);
}

void record_pop(metrics::activity_counters& activity, metrics::prometheus_metrics& prometheus, const std::string& queue,
                const std::string& group, bool auto_ack, const pop_delivery& delivered) {
    if (delivered.messages == 0) {
        activity.pop_empty(queue);
        prometheus.pop(queue, false);
        return;
    }
    activity.pop(queue, delivered.messages, delivered.lag_sum_ms, delivered.lag_max_ms);
    prometheus.pop(queue, true);
    prometheus.delivered(queue, group, delivered.messages);
    if (auto_ack) prometheus.acked(queue, group, delivered.messages);
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
                        const transaction_request& tx, const store::transaction_outcome& outcome,
                        const std::vector<std::size_t>& ack_op_index) {
    activity.transaction_total();
    if (!outcome.success) return;
    std::set<std::string> touched;
    std::map<std::string, std::int64_t> stored, duplicates;
    std::size_t push_op = 0;
    for (const auto& op : tx.operations) {
        if (op.type != transaction_op::kind::push) continue;
        for (std::size_t i = 0; i < op.items.size(); ++i) {
            const auto& row = outcome.push.at(push_op).at(i);
            if (!row) continue;
            const auto& queue = op.items[i].queue;
            touched.insert(queue);
            ++(row->queued ? stored : duplicates)[queue];
        }
        ++push_op;
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
