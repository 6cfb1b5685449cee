#pragma once
// What the handlers depend on, wired together in main().
#include "api/requests.hpp"
#include "config/config.hpp"
#include "core/pop_waiters.hpp"
#include "core/push_fusion.hpp"
#include "core/push_notifier.hpp"
#include "db/pg_pool.hpp"

#include <string>

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
};

}  // namespace queen::app
