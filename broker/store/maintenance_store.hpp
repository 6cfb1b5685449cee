#pragma once
// Store layer (see store/queues_store.hpp): maintenance flags and housekeeping.
#include "db/pg_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::store {

struct maintenance_flags_row {
    bool push = false;
    bool pop = false;
};

// queen.get_maintenance: the flags every broker obeys.
boost::asio::awaitable<maintenance_flags_row> read_maintenance(db::pg_pool& pool);

// queen.set_maintenance: sets the given flags (nullopt keeps one) and notifies every broker.
boost::asio::awaitable<maintenance_flags_row> set_maintenance(db::pg_pool& pool, std::optional<bool> push,
                                                              std::optional<bool> pop);

// The housekeeping leader's session advisory lock: true when this connection took it (it
// holds it until the connection closes).
boost::asio::awaitable<bool> try_lead_housekeeping(db::pooled_connection& conn);

// Messages one housekeeping round removed from a queue: by retention (kind "retention" or
// "completed") or moved to a group's dead letters for maxWaitTimeSeconds ("expired").
struct removed_messages {
    std::string queue;
    std::string group;  // "" for retention
    std::string kind;
    std::int64_t messages = 0;
};

struct housekeeping_counts {
    std::string summary;  // the round's counts as JSON, for the log
    std::vector<removed_messages> removed;
};

// queen.run_housekeeping: one round of retention, expiry and reclaim, and what it removed.
boost::asio::awaitable<housekeeping_counts> run_housekeeping(db::pooled_connection& conn,
                                                             std::chrono::seconds group_idle,
                                                             std::chrono::seconds partition_idle);

// queen.raise_claim_floors: raises every queue's claim floors (one transaction per queue);
// how many were raised, and how many queues were skipped because a push held their lock.
struct claim_floor_counts {
    std::int64_t raised = 0;
    std::int64_t skipped = 0;
};
boost::asio::awaitable<claim_floor_counts> raise_claim_floors(db::pooled_connection& conn);

}  // namespace queen::store
