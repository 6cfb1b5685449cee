#pragma once
// Store layer (see store/queues_store.hpp): consumer groups (docs/consumer-groups.md).
#include "db/pg_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::store {

// One row of queen.group_cursors: a group on a queue and, when has_cursor, its cursor on one
// partition (a group registered before the queue's first push has none). Times are Unix µs.
struct group_cursor {
    std::string group;
    std::string queue;
    std::optional<std::int64_t> subscription_at;  // nullopt: from the beginning
    bool has_cursor = false;
    std::int64_t partition_id = 0;
    std::string partition;
    std::int64_t committed = 0;
    std::int64_t last_offset = 0;         // the partition's newest offset
    std::optional<std::string> lease_id;  // set only while the lease is live
    std::optional<std::int64_t> lease_end;
    std::optional<std::int64_t> lease_expires_at;
    std::int64_t attempts = 0;
    std::optional<std::int64_t> retry_at;
    std::optional<std::int64_t> last_claimed_at;
    std::optional<std::int64_t> pending_since;  // createdAt of the oldest message past the cursor
    std::int64_t pending_seconds = 0;           // whole seconds since pending_since, 0 without one
    std::optional<std::int64_t> committed_at;   // when committed last moved
    bool consumed = false;                      // the group has handed out or committed anything here
};

// queen.group_cursors: the group's cursors (nullopt: every group's) on the queues of the tenant
// `scope` (queue names as it shows them), by group, queue, partition.
boost::asio::awaitable<std::vector<group_cursor>> group_cursors(db::pg_pool& pool,
                                                                const std::optional<std::string>& group,
                                                                const std::optional<std::string>& scope);

// One registered (group, queue) of queen.list_group_summaries, counts from the stats snapshot.
struct group_summary {
    std::string group;
    std::string queue;
    std::int64_t members = 0;  // partitions the group has consumed from (queen.cursor_consumed)
    std::int64_t partitions_with_lag = 0;
    std::int64_t lag = 0;
    std::optional<std::int64_t> oldest_waiting_at;  // first uncommitted message, oldest cursor
    std::int64_t max_time_lag = 0;                  // seconds since oldest_waiting_at, 0 without one
    std::int64_t committed = 0;                     // Σ committed offsets
    std::optional<std::string> subscription_mode;   // all | new | timestamp; nullopt: queue mode
    std::optional<std::int64_t> subscription_at;
    std::int64_t registered_at = 0;
};

// queen.list_group_summaries: the registrations on the tenant `scope`'s queues (names as it
// shows them), by group, then queue.
boost::asio::awaitable<std::vector<group_summary>> group_summaries(db::pg_pool& pool,
                                                                   const std::optional<std::string>& scope);

// One cursor of queen.lagging_cursors.
struct lagging_cursor {
    std::string group;
    std::string queue;
    std::string partition;
    std::int64_t partition_id = 0;
    std::optional<std::string> lease_id;  // the live lease
    std::int64_t offset_lag = 0;
    std::int64_t time_lag_seconds = 0;
    std::int64_t oldest_unconsumed_at = 0;
    std::optional<std::int64_t> last_consumed_at;
};

// queen.lagging_cursors: cursors whose first uncommitted message is older than min_seconds,
// largest time lag first; on the tenant `scope`'s queues (names as it shows them).
boost::asio::awaitable<std::vector<lagging_cursor>> lagging_cursors(db::pg_pool& pool, std::int64_t min_seconds,
                                                                    const std::optional<std::string>& scope);

struct group_queue_deletion {
    std::string queue;
    std::int64_t deleted_partitions = 0;
    bool metadata_deleted = false;
};

// queen.delete_group: drops the group on the queue (a stored key; nullopt: on every queue of the
// tenant `scope`), its start too with delete_metadata; one element per queue it touched, by key.
boost::asio::awaitable<std::vector<group_queue_deletion>> delete_group(db::pg_pool& pool, const std::string& group,
                                                                       const std::optional<std::string>& queue,
                                                                       bool delete_metadata,
                                                                       const std::optional<std::string>& scope);

struct group_seek {
    std::string group;
    std::string queue;
    std::optional<std::string> partition;  // nullopt: every partition of the queue
    bool to_end = false;
    std::optional<std::int64_t> timestamp_us;  // set exactly when !to_end
};

enum class seek_status { ok, queue_not_found, partition_not_found, group_not_found };

struct seek_outcome {
    seek_status status = seek_status::ok;
    std::int64_t partitions_updated = 0;    // when ok
    std::optional<std::int64_t> newest_at;  // a partition seek: its newest message's createdAt
};

// queen.seek_group: moves the cursors to the end or to a time and releases their leases;
// throws std::runtime_error on a status it does not know.
boost::asio::awaitable<seek_outcome> seek_group(db::pg_pool& pool, const group_seek& seek);

struct subscription_update {
    std::int64_t queues_updated = 0;
    std::int64_t subscription_at = 0;  // the start written (Unix µs), never later than now
};

// queen.set_group_subscription: rewrites the group's start on every queue of the tenant `scope`
// where it is registered.
boost::asio::awaitable<subscription_update> set_group_subscription(db::pg_pool& pool, const std::string& group,
                                                                   std::int64_t at_us,
                                                                   const std::optional<std::string>& scope);

}  // namespace queen::store
