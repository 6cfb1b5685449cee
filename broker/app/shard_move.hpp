#pragma once
// `queen shards move`: moves one logical shard to another shard database with traffic running
// (docs/scaling.md, "Moving a logical shard"). Fence on the source, copy, repoint every proxy,
// release on the source; a failure before the repoint leaves everything as it was, and running
// the same move again after an interruption finishes or restarts it.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace queen::app {

struct shard_move_request {
    std::vector<std::string> proxies;  // every proxy database of the deployment
    int logical_shard = -1;
    std::string target;  // the database that will host it
};

struct shard_move_report {
    std::string source, target;           // as the proxies' cluster names them
    bool target_new = false;              // the target hosted no logical shard before
    bool extension = false;               // queen_ext installed on the target
    std::int64_t rows = 0;                // rows copied
    std::int64_t partitions = 0;          // partitions moved
    std::chrono::milliseconds fenced{0};  // from the fence to the repoint: writes to the shard waited this long
    bool finished_earlier = false;        // the shard was on the target: an interrupted move's release was finished
};

// Runs the move; throws std::runtime_error (std::invalid_argument for a request that cannot
// be right) naming the step and database that failed.
shard_move_report move_shard(const shard_move_request& request, std::chrono::milliseconds connect_wait);

}  // namespace queen::app
