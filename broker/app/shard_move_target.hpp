#pragma once
// Whether a database may receive a logical shard (docs/scaling.md, "Moving a logical shard"):
// read before a move changes anything, so that a proxy, a database of the deployment named by
// another connection string, a shard of another deployment or an unsharded broker's database
// is refused with nothing changed.
#include "db/sync_connection.hpp"

#include <string>
#include <vector>

namespace queen::app {

// Throws std::invalid_argument naming what `target` (key=value text) is when it may not receive
// logical shard `shard`. `mapping` is each logical shard's database as the proxies name it;
// `proxies` and `proxy_urls` the proxies' connections and strings.
void check_move_target(db::sync_connection& target, const std::string& target_conninfo, int shard,
                       const std::vector<std::string>& mapping, std::vector<db::sync_connection>& proxies,
                       const std::vector<std::string>& proxy_urls);

}  // namespace queen::app
