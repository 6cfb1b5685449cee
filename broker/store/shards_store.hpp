#pragma once
// Store layer (see store/queues_store.hpp): a sharded deployment's layout, read through its
// proxy (docs/scaling.md). Synchronous: `queen shards status` and the broker's boot read it
// before any pool exists. Each function throws std::runtime_error naming what it was reading.
#include <cstdint>
#include <string>
#include <vector>

namespace queen::store {

// queen.shard_databases(): the distinct shard databases' connection strings, in the order of
// their first logical shard.
std::vector<std::string> read_shard_databases(const std::string& proxy_conninfo);

struct shard_status_row {
    std::string database;
    int port = 0;
    std::int64_t partitions = 0;
    std::int64_t messages = 0;
    std::int64_t bytes = 0;
};

// queen.shard_status() on every shard database, by port and name.
std::vector<shard_status_row> read_shard_status(const std::string& proxy_conninfo);

}  // namespace queen::store
