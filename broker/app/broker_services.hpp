#pragma once
// Every long-lived part of a running broker, built in dependency order over one io_context,
// and the context the handlers see. Parts that run on their own (the listener, the
// housekeeper, the maintenance flags, the spool drainer, the activity recorder, the key
// fetcher) start with start() and stop with stop().
#include "api/shared/broker_context.hpp"
#include "app/database_setup.hpp"
#include "auth/authenticator.hpp"
#include "config/config.hpp"
#include "crypto/payload_cipher.hpp"
#include "db/pg_listener.hpp"
#include "db/pg_pool.hpp"
#include "maintenance/maintenance_flags.hpp"
#include "metrics/activity_counters.hpp"
#include "metrics/activity_recorder.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "metrics/scrape_cache.hpp"
#include "services/ack_fusion.hpp"
#include "services/housekeeper.hpp"
#include "services/pop_fusion.hpp"
#include "services/pop_waiters.hpp"
#include "services/push_fusion.hpp"
#include "services/push_notifier.hpp"
#include "services/queue_settings.hpp"
#include "services/rate_limiter.hpp"
#include "services/tenant_bytes.hpp"
#include "spool/spool_drainer.hpp"
#include "spool/spool_file.hpp"
#include "util/memory_budget.hpp"

#include <utility>
#include <boost/asio/io_context.hpp>

#include <memory>
#include <optional>
#include <vector>

namespace queen::app {

class broker_services {
public:
    // Builds every part; nothing runs until start(). Throws std::exception naming what failed
    // (an unusable spool directory, a bad encryption key).
    broker_services(boost::asio::io_context& ioc, const config::broker_config& cfg, const database_setup& database);

    void start();
    // Stops taking work: background loops end, parked pops are woken to answer.
    void stop();
    // After the io_context stopped: flushes the last minute's activity (returns when the flush
    // ends, at most 3 s) and closes the pool.
    void finish(boost::asio::io_context& ioc);

    api::broker_context& context() noexcept { return ctx_; }
    metrics::prometheus_metrics& prometheus() noexcept { return prometheus_; }

private:
    spool::spool_file spool_;
    metrics::prometheus_metrics prometheus_;
    db::pg_pool pool_;
    services::pop_waiters waiters_;
    services::push_notifier notifier_;
    services::push_fusion fusion_;
    services::ack_fusion ack_fusion_;
    services::pop_fusion pop_fusion_;
    maintenance::maintenance_flags flags_;
    spool::spool_drainer drainer_;
    db::pg_listener listener_;
    std::optional<crypto::payload_cipher> cipher_;
    services::queue_settings queue_settings_;
    metrics::activity_counters activity_;
    metrics::activity_recorder recorder_;
    metrics::scrape_cache scrape_;
    auth::authenticator authentication_;
    services::rate_limiter rate_limiter_;
    services::rate_limiter tenant_rate_limiter_;
    services::tenant_bytes tenant_bytes_;
    util::memory_budget parse_budget_;
    services::housekeeper housekeeping_;
    // Behind a shard proxy, the LISTEN and the housekeeping of every shard database after the
    // first (listener_ and housekeeping_ serve the first).
    std::vector<std::unique_ptr<db::pg_listener>> shard_listeners_;
    std::vector<std::unique_ptr<services::housekeeper>> shard_housekeepers_;
    api::broker_context ctx_;
};

}  // namespace queen::app
