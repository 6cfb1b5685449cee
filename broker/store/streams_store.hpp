#pragma once
// Store layer (see store/queues_store.hpp): the state store and cycles of streams
// (docs/streams.md, sql/procedures/97_streams.sql).
#include "db/pg_pool.hpp"
#include "domain/push_item.hpp"
#include "domain/stream_cycle.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::store {

using domain::stream_cycle_ack;
using domain::stream_cycle_call;
using domain::stream_state_filter;
using domain::stream_state_op;

struct stream_registration {
    std::string query_id;
    bool fresh = false;
    bool reset = false;
    bool conflict = false;  // another config_hash is stored and reset was not asked for
};

// queen.stream_register: registers (or updates, or resets) the query named `name`; the name
// and the queues are stored keys (docs/tenancy.md).
boost::asio::awaitable<stream_registration> register_stream_query(db::pg_pool& pool, const std::string& name,
                                                                  const std::string& source_queue,
                                                                  const std::optional<std::string>& sink_queue,
                                                                  const std::string& config_hash, bool reset);

struct stream_state_row {
    std::string key;
    std::string value;  // JSON text
    std::int64_t updated_at_us = 0;
};

// queen.stream_state_get: the lane's rows sorted by key; none for a query outside the tenant
// `scope`. Throws db::pg_error QN413 naming the limit when they are more rows or bytes than one
// answer holds (counted by the database, before any row is sent).
boost::asio::awaitable<std::vector<stream_state_row>> stream_state(db::pg_pool& pool, const std::string& query_id,
                                                                   std::int64_t partition_id,
                                                                   const stream_state_filter& filter,
                                                                   const std::optional<std::string>& scope);

struct stream_cycle_outcome {
    bool success = false;
    std::string error;    // when not success
    bool applied = true;  // false: a replay (its ack a noop), of which nothing was applied
    std::size_t state_ops_applied = 0;
    // Per push item in request order (when success): its outcome and transaction id.
    std::vector<domain::push_outcome> push;
    std::vector<std::string> push_transaction_ids;
    bool acked = false;
    bool ack_noop = false;
    bool ack_dlq = false;
    bool lease_released = false;
    std::optional<std::string> source_queue;  // the query's source queue
};

// queen.stream_cycle: the cycle in ONE transaction, all of it or nothing (success false with the
// failure). Throws db::pg_error QNDEC like store::apply_acks when the ack must be resolved by
// the broker's decoder. A query outside the tenant `scope` is an unknown query.
boost::asio::awaitable<stream_cycle_outcome> run_stream_cycle(db::pg_pool& pool, const stream_cycle_call& call,
                                                              const std::optional<std::string>& scope);

}  // namespace queen::store
