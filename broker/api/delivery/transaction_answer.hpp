#pragma once
#include "domain/tenant_scope.hpp"
// The answer of POST /api/v1/transaction (docs/http-api.md, transaction), from what the store
// reports: one result per push item and per ack, in operation order.
#include "api/shared/transaction_request.hpp"
#include "store/transaction_store.hpp"

#include <set>
#include <string>

namespace queen::api {

struct transaction_answer {
    std::string json;                    // {transactionId, success, results, error?}
    std::set<std::string> woken_queues;  // queues whose parked pops may now be served
};

// `error` is set exactly when the transaction rolled back. Push items name stored queue keys;
// the answer names them as `scope`'s tenant knows them.
transaction_answer render_transaction_answer(const transaction_request& tx, const store::transaction_outcome& outcome,
                                             const std::string& transaction_id, const std::optional<std::string>& error,
                                             const domain::tenant_scope& scope);

}  // namespace queen::api
