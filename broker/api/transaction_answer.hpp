#pragma once
// The per-operation results of a transaction answer (API.md, transaction), from what the
// store reports: one result per push item and per ack, in operation order.
#include "api/transaction_request.hpp"
#include "core/push_batch.hpp"
#include "store/transaction_store.hpp"

#include <nlohmann/json.hpp>

#include <set>
#include <string>

namespace queen::api {

struct transaction_results {
    nlohmann::json results = nlohmann::json::array();
    std::set<std::string> woken_queues;  // queues whose parked pops may now be served
};

// `batch` is the push batch of tx's push operations, in operation order.
transaction_results render_transaction_results(const transaction_request& tx, const core::push_batch& batch,
                                               const store::transaction_outcome& outcome);

}  // namespace queen::api
