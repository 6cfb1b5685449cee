#pragma once
// Store layer (see store/queues_store.hpp): pushes and acks in one transaction.
#include "db/pg_pool.hpp"
#include "domain/push_item.hpp"
#include "store/acks_store.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::store {

// One ack of a transaction: an ack_request with its own group.
struct transaction_ack {
    std::string consumer_group;
    ack_request ack;  // partition_id -1 resolves nowhere
};

struct transaction_failure {
    std::string kind;      // "lease" or "ack"
    std::size_t item = 0;  // for an ack: its 1-based position in the acks
    std::string error;
};

struct transaction_outcome {
    bool success = false;
    // Per push request, per item: its outcome (created_at_us unset); nullopt when the
    // transaction rolled back.
    std::vector<std::vector<std::optional<domain::push_outcome>>> push;
    std::vector<ack_outcome> ack;  // item: 1-based position in the acks
    std::optional<transaction_failure> failure;
};

// queen.transaction: every item of `pushes` and every ack in ONE transaction, or none of them
// (with the first failure). Acks and required leases are limited to the tenant `scope` (as
// store::apply_acks). Throws db::pg_error QNDEC like store::apply_acks.
boost::asio::awaitable<transaction_outcome> run_transaction(
    db::pg_pool& pool, const std::vector<const std::vector<domain::push_item>*>& pushes,
    const std::vector<transaction_ack>& acks, const std::vector<std::string>& required_leases,
    const std::optional<std::string>& scope);

}  // namespace queen::store
