#include "app/shard_move_target.hpp"

#include "db/conninfo.hpp"
#include "log/log.hpp"
#include "schema/shard_proxy_installer.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <set>
#include <stdexcept>

namespace queen::app {

namespace {

// What the target says it is: no proxy, no other deployment's shard, no unsharded broker's
// database, and, when a shard, hosting what the proxies map to it (the moving shard aside).
void check_kind(db::sync_connection& target, const std::string& shown, int shard,
                const std::vector<std::string>& mapping, const std::string& target_conninfo) {
    const auto kind = schema::read_database_kind(target);
    if (kind.proxy)
        throw std::invalid_argument(fmt::format(
            "{} is a proxy database (it has the cluster queen_shards): a logical shard cannot move there", shown));
    std::set<int> mapped;
    for (std::size_t s = 0; s < mapping.size(); ++s)
        if (mapping[s] == target_conninfo && static_cast<int>(s) != shard) mapped.insert(static_cast<int>(s));
    if (!kind.shard) {
        if (kind.holds_queues)
            throw std::invalid_argument(fmt::format(
                "{} holds queues and is no shard: it is an unsharded broker's database, not a move's target", shown));
        return;
    }
    if (kind.shard->logical_shards != static_cast<int>(mapping.size()))
        throw std::invalid_argument(fmt::format("{} is a shard of {} logical shards, the proxies' cluster has {}",
                                                shown, kind.shard->logical_shards, mapping.size()));
    std::set<int> hosted(kind.shard->hosted.begin(), kind.shard->hosted.end());
    hosted.erase(shard);
    if (hosted != mapped)
        throw std::invalid_argument(fmt::format(
            "{} hosts logical shards {{{}}} but the proxies map {{{}}} to it: it is a database of this deployment "
            "under another connection string, or of another deployment (name it as `queen shards status` does)",
            shown, fmt::join(hosted, ","), fmt::join(mapped, ",")));
}

// The target is none of the proxies and no database the proxies name otherwise.
void check_identity(db::sync_connection& target, const std::string& shown, const std::string& target_conninfo,
                    int shard, const std::vector<std::string>& mapping, std::vector<db::sync_connection>& proxies,
                    const std::vector<std::string>& proxy_urls) {
    const auto mark = schema::mark_session(target);
    for (std::size_t i = 0; i < proxies.size(); ++i)
        if (schema::sees_session(proxies[i], mark))
            throw std::invalid_argument(fmt::format("{} is the proxy database {}: a logical shard cannot move there",
                                                    shown, db::redact_passwords(proxy_urls[i])));
    const std::set<std::string> databases(mapping.begin(), mapping.end());
    for (const auto& database : databases) {
        if (database == target_conninfo) continue;
        try {
            db::sync_connection c(database);
            if (!schema::sees_session(c, mark)) continue;
        } catch (const std::exception& e) {
            log::warn("{} could not be compared with the target: {}", db::redact_passwords(database),
                      db::redact_passwords(e.what()));
            continue;
        }
        const bool source = database == mapping[static_cast<std::size_t>(shard)];
        throw std::invalid_argument(fmt::format(
            "{} is the database the proxies name {}{}", shown, db::redact_passwords(database),
            source ? fmt::format(", which holds logical shard {} already", shard) : std::string(" (name it so)")));
    }
}

}  // namespace

void check_move_target(db::sync_connection& target, const std::string& target_conninfo, int shard,
                       const std::vector<std::string>& mapping, std::vector<db::sync_connection>& proxies,
                       const std::vector<std::string>& proxy_urls) {
    const std::string shown = db::redact_passwords(target_conninfo);
    check_identity(target, shown, target_conninfo, shard, mapping, proxies, proxy_urls);
    check_kind(target, shown, shard, mapping, target_conninfo);
}

}  // namespace queen::app
