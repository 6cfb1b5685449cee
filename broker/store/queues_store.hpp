#pragma once
// The store layer (docs/architecture.md, "Processes and layers"): the only code that holds SQL text and
// reads result columns. One typed function per database operation, each one call of a
// queen.* function; plain structs in and out. This file: queues and the database's health.
#include "db/pg_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace queen::store {

struct queue_config {
    std::string queue;
    std::optional<std::string> namespace_name;
    std::optional<std::string> task;
    std::string options_json;  // validated options, as a JSON object
};

struct configured_queue {
    std::string queue_id;
    std::string partition_id;  // of its Default partition
    std::string options_json;  // every option with its stored value
};

// queen.configure: creates or reconfigures the queue and its Default partition.
boost::asio::awaitable<configured_queue> configure_queue(db::pg_pool& pool, const queue_config& config);

// queen.delete_queue: removes the queue and everything stored for it; true when it existed.
boost::asio::awaitable<bool> delete_queue(db::pg_pool& pool, const std::string& queue);

// queen.queue_encryption: encryptionEnabled of each named queue (false for unknown ones).
boost::asio::awaitable<std::map<std::string, bool>> queue_encryption(db::pg_pool& pool,
                                                                     const std::set<std::string>& queues);

struct database_health {
    std::string server_version;
    std::optional<std::string> extension_version;  // queen_ext's, when installed
};

// queen.database_health: one round trip that proves the database answers.
boost::asio::awaitable<database_health> probe_database(db::pg_pool& pool);

}  // namespace queen::store
