#pragma once
// What the handlers count once their database work committed: the minute's activity in
// metrics::activity_counters (docs/status-and-analytics.md, "What is counted") and the
// Prometheus counters in metrics::prometheus_metrics (docs/metrics.md).
#include "api/shared/requests.hpp"
#include "api/shared/transaction_request.hpp"
#include "domain/push_item.hpp"
#include "metrics/activity_counters.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "store/acks_store.hpp"
#include "store/pop_store.hpp"
#include "store/transaction_store.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace queen::api {

// What one pop delivered: its messages and Σ / max of (now − createdAt) over them.
struct pop_delivery {
    std::int64_t messages = 0;
    std::int64_t lag_sum_ms = 0;
    std::int64_t lag_max_ms = 0;
};

// A push request: the messages stored (duplicates are not), per queue.
void record_push(metrics::activity_counters& activity, metrics::prometheus_metrics& prometheus,
                 const std::vector<domain::push_item>& items, const std::vector<domain::push_outcome>& outcomes);
// One claim of a pop: what it did besides handing out spans (leases taken over, offsets
// handed out again, messages dead-lettered on the way), per (queue, group).
void record_claim(metrics::activity_counters& activity, metrics::prometheus_metrics& prometheus,
                  const std::string& queue, const std::string& group, const store::claim_counts& counts);
// A pop that answered: the messages it delivered (none: an empty pop) and their lag, per queue
// and (queue, group); with autoAck they count as acked too.
void record_pop(metrics::activity_counters& activity, metrics::prometheus_metrics& prometheus, const std::string& queue,
                const std::string& group, bool auto_ack, const pop_delivery& delivered);
// An ack request: every ack item; per queue the applied ones, completed as success and
// failed, retry or dlq as failed; and the messages it moved to the dead letters. Prometheus:
// per (queue, group) acked, nacked by status, and dead-lettered by reason (dlq, retries).
void record_acks(metrics::activity_counters& activity, metrics::prometheus_metrics& prometheus,
                 const std::vector<ack_item>& acks, const std::vector<store::ack_outcome>& answers);
// A committed transaction: its stored pushes and applied acks as above, and one transaction
// for each queue it touched.
void record_transaction(metrics::activity_counters& activity, metrics::prometheus_metrics& prometheus,
                        const transaction_request& tx, const store::transaction_outcome& outcome,
                        const std::vector<std::size_t>& ack_op_index);

}  // namespace queen::api
