#pragma once
// Store layer (see store/queues_store.hpp): browsing stored messages and deleting them
// (tombstones); sql/procedures/44_tombstones.sql and 73_browse.sql, docs/operator-routes.md.
#include "db/pg_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::store {

// Which messages a browse covers; an absent value is no condition. The window is
// [from, to] on createdAt; absent bounds are open.
struct browse_filter {
    std::optional<std::string> queue;
    std::optional<std::string> partition;
    std::optional<std::string> namespace_name;
    std::optional<std::string> task;
    std::optional<std::string> status;
    std::optional<std::string> consumer_group;
    std::optional<std::int64_t> from_us;
    std::optional<std::int64_t> to_us;
    std::int64_t limit = 200;
    std::int64_t offset = 0;
    std::optional<std::string> scope;  // the tenant scope (sql/procedures/21_tenancy.sql)
};

// The frame fields of a message. Where the database could not decode its segment they are
// empty, and the first message of that segment in a page carries the segment to decode.
struct message_frame {
    std::optional<std::string> transaction_id;
    std::optional<std::string> trace_id;
    std::optional<std::string> producer_sub;
    std::optional<std::int64_t> segment_first_offset;
    std::optional<std::vector<std::uint8_t>> segment;
};

struct browsed_message {
    std::int64_t partition_id = 0;
    std::int64_t offset = 0;
    std::string queue;
    std::string partition;
    std::optional<std::string> namespace_name;
    std::optional<std::string> task;
    std::int64_t queue_priority = 0;
    std::int64_t created_at_us = 0;
    std::string status;
    std::string queue_status;
    std::int64_t consumed_by = 0;                     // named groups whose cursor passed it
    std::int64_t total_groups = 0;                    // named groups with a cursor on its partition
    std::optional<std::int64_t> lease_expires_at_us;  // queue-mode lease holding it
    message_frame frame;
};

// The cursors of the partitions a page's messages come from.
struct browse_mode {
    bool has_queue_mode = false;
    std::int64_t bus_groups = 0;  // distinct named groups
};

struct message_page {
    std::vector<browsed_message> messages;
    browse_mode mode;
};

// queen.browse_messages, then queen.browse_mode of the page's partitions: one page, newest first.
boost::asio::awaitable<message_page> browse_messages(db::pg_pool& pool, const browse_filter& filter);

struct message_group {
    std::string name;
    bool consumed = false;
    std::optional<std::int64_t> lease_expires_at_us;
};

struct message_detail {
    std::int64_t partition_id = 0;
    std::int64_t offset = 0;
    std::string queue;
    std::string partition;
    std::optional<std::string> namespace_name;
    std::optional<std::string> task;
    std::int64_t created_at_us = 0;
    message_frame frame;
    std::optional<std::string> payload;  // as stored; nullopt when deleted or not decodable here
    std::string status;
    std::optional<std::int64_t> lease_expires_at_us;
    std::optional<std::int64_t> deleted_at_us;
    std::optional<std::string> error_message;  // of the newest dead letter
    std::optional<std::int64_t> retry_count;
    std::int64_t lease_time = 0, retry_limit = 0, retry_delay = 0, ttl = 0, priority = 0;
    std::vector<message_group> groups;  // every cursor of the partition, by name
};

// queen.message_detail and queen.message_consumer_groups; nullopt when there is no such message
// in the tenant `scope` (queen.scoped_partition_id).
boost::asio::awaitable<std::optional<message_detail>> read_message(db::pg_pool& pool, std::int64_t partition_id,
                                                                   const std::string& transaction_id,
                                                                   const std::optional<std::string>& scope);

struct deleted_message {
    std::int64_t offset = 0;
    bool already_deleted = false;
    std::string queue;
};

// queen.delete_message: tombstones the message and removes its dead letters; nullopt when
// there is no such message in the tenant `scope`.
boost::asio::awaitable<std::optional<deleted_message>> delete_message(db::pg_pool& pool, std::int64_t partition_id,
                                                                      const std::string& transaction_id,
                                                                      const std::optional<std::string>& deleted_by,
                                                                      const std::optional<std::string>& scope);

}  // namespace queen::store
