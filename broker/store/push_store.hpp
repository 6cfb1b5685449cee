#pragma once
// Store layer (see store/queues_store.hpp): storing pushes, and telling other brokers.
#include "db/pg_pool.hpp"
#include "domain/push_item.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::store {

// queen.push: every item of every request in ONE transaction. The outcomes come per request,
// in item order. Throws db::pg_error (or std::runtime_error when the answer does not match).
boost::asio::awaitable<std::vector<std::vector<domain::push_outcome>>> push(
    db::pg_pool& pool, const std::vector<const std::vector<domain::push_item>*>& requests);

// queen.push_spooled: as push for one list of items, where an item with a probe time is first
// looked for among the messages created since then (a spooled push that may have committed
// already). probe_since_us is empty or has one entry per item.
boost::asio::awaitable<std::vector<domain::push_outcome>> push_spooled(
    db::pg_pool& pool, const std::vector<domain::push_item>& items,
    const std::vector<std::optional<std::int64_t>>& probe_since_us);

// queen.notify_brokers: one NOTIFY on `channel` per payload, sent at commit.
boost::asio::awaitable<void> notify_brokers(db::pg_pool& pool, const std::string& channel,
                                            const std::vector<std::string>& payloads);

}  // namespace queen::store
