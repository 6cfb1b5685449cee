#pragma once
// Store layer (see store/queues_store.hpp): the operator's listings and the stats snapshot
// behind them (sql/procedures/68_stats.sql, 71_resources.sql; docs/operator-routes.md).
#include "db/pg_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::store {

// The counts of docs/operator-routes.md ("Counts and the stats snapshot") for a partition, or summed over a queue's.
struct message_counts {
    std::int64_t total = 0;
    std::int64_t pending = 0;
    std::int64_t processing = 0;
    std::int64_t completed = 0;
    std::int64_t dead_letter = 0;
};

struct listed_queue {
    std::int64_t id = 0;
    std::string name;
    std::optional<std::string> namespace_name;
    std::optional<std::string> task;
    std::int64_t created_at_us = 0;
    std::int64_t partitions = 0;
    message_counts counts;
};

struct queue_listing {
    std::int64_t total = 0;  // every queue matching the filters
    std::vector<listed_queue> queues;
    int stats_age = -1;  // seconds; -1 before the first snapshot
};

// queen.list_queues: the queues of the tenant `scope`, newest first, counts from the newest
// snapshot, names as the scope's tenant knows them; exact namespace and task filters when
// given; one page.
boost::asio::awaitable<queue_listing> list_queues(db::pg_pool& pool, const std::optional<std::string>& namespace_name,
                                                  const std::optional<std::string>& task, std::int64_t limit,
                                                  std::int64_t offset, const std::optional<std::string>& scope);

struct partition_detail {
    std::int64_t id = 0;
    std::string name;
    std::int64_t created_at_us = 0;
    message_counts counts;
    std::optional<std::int64_t> newest_at_us;          // createdAt of the newest message
    std::optional<std::int64_t> oldest_waiting_at_us;  // oldest message the slowest group has not committed
};

struct queue_detail {
    std::int64_t id = 0;
    std::string name;
    std::optional<std::string> namespace_name;
    std::optional<std::string> task;
    std::int64_t created_at_us = 0;
    std::vector<partition_detail> partitions;  // by name
};

// queen.queue_detail: the queue (by its stored key) with its partitions counted now; nullopt
// for an unknown queue.
boost::asio::awaitable<std::optional<queue_detail>> read_queue_detail(db::pg_pool& pool, const std::string& queue);

struct grouping {
    std::string name;  // the namespace or task
    std::int64_t queues = 0;
    std::int64_t partitions = 0;
    std::int64_t total = 0;
    std::int64_t pending = 0;
};

enum class grouping_kind { namespace_name, task };

// queen.list_groupings: per namespace (or task) with at least one queue of the tenant
// `scope`, by name.
boost::asio::awaitable<std::vector<grouping>> list_groupings(db::pg_pool& pool, grouping_kind kind,
                                                             const std::optional<std::string>& scope);

struct stats_refresh {
    bool skipped = false;  // another session's refresh was running
    std::int64_t snapshot_id = 0;
    std::int64_t partitions = 0;
    std::int64_t queues = 0;
    std::int64_t taken_at_us = 0;
    std::int64_t duration_ms = 0;
};

// CALL queen.refresh_stats: a new snapshot, page by page; skipped when one is running. With
// count_bytes, it sums each queue's stored segment bytes too (QUEEN_TENANT_MAX_BYTES).
boost::asio::awaitable<stats_refresh> refresh_stats(db::pooled_connection& conn, bool count_bytes);
boost::asio::awaitable<stats_refresh> refresh_stats(db::pg_pool& pool, bool count_bytes);

}  // namespace queen::store
