#pragma once
// What the handlers depend on, wired together in main().
#include "api/requests.hpp"
#include "config/config.hpp"
#include "core/queue_settings.hpp"
#include "crypto/payload_cipher.hpp"
#include "core/pop_waiters.hpp"
#include "core/push_fusion.hpp"
#include "core/push_notifier.hpp"
#include "db/pg_pool.hpp"

#include <string>

namespace queen::maintenance {
class maintenance_flags;
}
namespace queen::spool {
class spool_file;
class spool_drainer;
}  // namespace queen::spool

namespace queen::app {

struct broker_context {
    const config::broker_config& config;
    db::pg_pool& pool;
    core::push_fusion& fusion;
    core::push_notifier& notifier;
    core::pop_waiters& waiters;
    api::limits limits;
    std::string database_mode;   // "embedded" or "external"
    int schema_version = 0;
    // Maintenance flags and the spool (docs/maintenance-and-spool.md); null: none (tests).
    maintenance::maintenance_flags* maintenance = nullptr;
    spool::spool_file* spool = nullptr;
    spool::spool_drainer* drainer = nullptr;
    // Encryption at rest: the key (null without QUEEN_ENCRYPTION_KEY) and queue settings.
    const crypto::payload_cipher* cipher = nullptr;
    core::queue_settings* queue_settings = nullptr;
};

}  // namespace queen::app
