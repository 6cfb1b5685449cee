#pragma once
// What the handlers count once their database work committed: the minute's activity in
// metrics::activity_counters (docs/status-and-analytics.md, "What is counted") and the
// Prometheus counters in metrics::prometheus_metrics (docs/metrics.md).
#include "api/requests.hpp"
#include "api/transaction_request.hpp"
#include "core/push_batch.hpp"
#include "core/push_types.hpp"
#include "metrics/activity_counters.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "store/acks_store.hpp"
#include "store/transaction_store.hpp"

#include <vector>

namespace queen::api {

// A push request: the messages stored (duplicates are not), per queue.
void record_push(metrics::activity_counters& activity, metrics::prometheus_metrics& prometheus, const std::vector<core::push_item>& items,
                 const std::vector<core::push_outcome>& outcomes);
// An ack request: every ack item; per queue the applied ones, completed as success and
// failed, retry or dlq as failed; and the messages it moved to the dead letters. Prometheus:
// per (queue, group) acked, nacked by status, and dead-lettered by reason (dlq, retries).
void record_acks(metrics::activity_counters& activity, metrics::prometheus_metrics& prometheus, const std::vector<ack_item>& acks,
                 const std::vector<store::ack_outcome>& answers);
// A committed transaction: its stored pushes and applied acks as above, and one transaction
// for each queue it touched.
void record_transaction(metrics::activity_counters& activity, metrics::prometheus_metrics& prometheus, const transaction_request& tx,
                        const core::push_batch& batch, const store::transaction_outcome& outcome,
                        const std::vector<std::size_t>& ack_op_index);

}  // namespace queen::api
