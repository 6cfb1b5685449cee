#pragma once
// Store layer (see store/queues_store.hpp): storing pushes, and telling other brokers.
#include "core/push_batch.hpp"
#include "db/pg_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::store {

// One stored (or duplicate) item of a push call.
struct pushed_item {
    std::size_t item = 0;             // 1-based position in the batch's items
    bool queued = false;              // false: a duplicate of a stored original
    std::int64_t partition_id = 0;
    std::int64_t offset = 0;          // of the stored message (the original for a duplicate)
    std::optional<std::int64_t> created_at_us;
};

// queen.push: every item of the batch in ONE transaction, one row per item.
boost::asio::awaitable<std::vector<pushed_item>> push(db::pg_pool& pool, const core::push_batch& batch);

// queen.push_spooled: as push, but an item with a probe time is first looked for among the
// messages created since then (a spooled push that may have committed already).
boost::asio::awaitable<std::vector<pushed_item>> push_spooled(
    db::pg_pool& pool, const core::push_batch& batch, const std::vector<std::optional<std::int64_t>>& probe_since_us);

// queen.notify_brokers: one NOTIFY on `channel` per payload, sent at commit.
boost::asio::awaitable<void> notify_brokers(db::pg_pool& pool, const std::string& channel,
                                            const std::vector<std::string>& payloads);

}  // namespace queen::store
