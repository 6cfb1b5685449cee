#pragma once
// What the handlers depend on, built whole in main(): every part is there for the life of
// the server.
#include "config/config.hpp"
#include "config/limits.hpp"
#include "crypto/payload_cipher.hpp"
#include "db/pg_pool.hpp"
#include "http/per_client_slots.hpp"
#include "services/ack_fusion.hpp"
#include "services/pop_fusion.hpp"
#include "services/pop_waiters.hpp"
#include "services/push_fusion.hpp"
#include "services/push_notifier.hpp"
#include "services/queue_settings.hpp"
#include "services/rate_limiter.hpp"
#include "services/tenant_bytes.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace queen::maintenance {
class maintenance_flags;
}
namespace queen::db {
class pg_listener;
}
namespace queen::metrics {
class activity_counters;
class prometheus_metrics;
class scrape_cache;
}  // namespace queen::metrics
namespace queen::spool {
class spool_file;
class spool_drainer;
}  // namespace queen::spool

namespace queen::auth {
class authenticator;
}

namespace queen::api {

struct broker_context {
    const config::broker_config& config;
    db::pg_pool& pool;
    services::push_fusion& fusion;
    services::ack_fusion& ack_fusion;  // acknowledgements outside transactions
    services::pop_fusion& pop_fusion;  // pops (store::claim_spans, fused when they overlap)
    services::push_notifier& notifier;
    services::pop_waiters& waiters;
    config::limits limits;
    std::string database_mode;  // "embedded" or "external"
    int schema_version = 0;
    // Maintenance flags and the spool (docs/maintenance-and-spool.md).
    maintenance::maintenance_flags& maintenance;
    spool::spool_file& spool;
    spool::spool_drainer& drainer;
    // Encryption at rest: the key (none without QUEEN_ENCRYPTION_KEY) and queue settings.
    const std::optional<crypto::payload_cipher>& cipher;
    services::queue_settings& queue_settings;
    // This minute's activity, flushed by metrics::activity_recorder (docs/status-and-analytics.md).
    metrics::activity_counters& activity;
    // The Prometheus families, the database's part of a scrape, and what a scrape reads live
    // (docs/metrics.md).
    metrics::prometheus_metrics& prometheus;
    metrics::scrape_cache& scrape;
    const db::pg_listener& listener;
    std::chrono::steady_clock::time_point started_at;
    // JWT authentication (docs/security.md); enabled() is false with JWT_ENABLED off.
    auth::authenticator& auth;
    // Abuse limits (config::abuse_limits): requests per token subject (or client address),
    // parked long-polls per client address.
    services::rate_limiter& rate_limiter;
    http::per_client_slots longpoll_slots;
    // Limits per tenant (config::tenant_limits; all off with tenancy off): requests and parked
    // long-polls per tenant, and its stored bytes.
    services::rate_limiter& tenant_rate_limiter;
    http::per_client_slots tenant_longpoll_slots;
    services::tenant_bytes& tenant_bytes;
};

}  // namespace queen::api
