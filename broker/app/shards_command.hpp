#pragma once
// `queen shards …`, the operator's commands for a sharded deployment (docs/scaling.md):
//   queen shards init --proxy <url> --shard <url> [--shard <url>…] [--logical-shards N]
//   queen shards status --proxy <url>
// Each prints what it did or found; exit status 0, 2 for bad arguments, 1 for a failure.
#include <string>
#include <vector>

namespace queen::app {

int shards_command(const std::vector<std::string>& args);

}  // namespace queen::app
