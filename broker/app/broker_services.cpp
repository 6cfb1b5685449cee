#include "app/broker_services.hpp"

#include "log/log.hpp"

#include <boost/asio/co_spawn.hpp>

#include <fmt/core.h>

#include <unistd.h>
#include <random>

namespace queen::app {

namespace {

std::string random_instance_id() {
    std::random_device rd;
    return fmt::format("{:08x}{:08x}", rd(), rd());
}

// This host's name, as the activity rows name the broker ("localhost" when unknown).
std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
    return name;
}

spool::spool_options spool_options_of(const config::broker_config& cfg, const database_setup& database) {
    return {cfg.spool_dir, cfg.port, database.initial_flags().database_id, cfg.spool_max_bytes};
}

db::pg_pool_options pool_options_of(const config::broker_config& cfg, const database_setup& database,
                                    metrics::prometheus_metrics& prometheus) {
    db::pg_pool_options o;
    o.conninfo = database.request_conninfo();
    o.size = cfg.pool_size;
    o.prepared_statements = cfg.db_prepared_statements;
    o.on_acquire_waited = [&prometheus](std::chrono::steady_clock::duration d) {
        prometheus.pool_waited(std::chrono::duration<double>(d).count());
    };
    o.on_statement_failed = [&prometheus](const std::string& sqlstate) { prometheus.db_error(sqlstate); };
    return o;
}

services::push_fusion_options fusion_options_of(const config::broker_config& cfg,
                                                metrics::prometheus_metrics& prometheus) {
    return {cfg.push_fusion_wait, cfg.push_fusion_max_items, cfg.push_fusion_max_inflight,
            [&prometheus](std::size_t items, std::size_t requests, std::chrono::steady_clock::duration d) {
                prometheus.fused_call(items, requests, std::chrono::duration<double>(d).count());
            }};
}

services::pop_fusion_options pop_fusion_options_of(const config::broker_config& cfg,
                                                   metrics::prometheus_metrics& prometheus) {
    return {cfg.pop_fusion_wait, cfg.pop_fusion_max_requests,
            [&prometheus](std::size_t requests) { prometheus.fused_pop_call(requests); }};
}

spool::drainer_options drainer_options_of(const config::broker_config& cfg, metrics::prometheus_metrics& prometheus) {
    spool::drainer_options o;
    o.past_tenant_queue_limit = cfg.per_tenant.max_queues > 0;
    o.on_drained_item = [&prometheus](const std::string& queue, bool stored) {
        if (stored)
            prometheus.published(queue, 1);
        else
            prometheus.duplicates(queue, 1);
    };
    return o;
}

// Notifications go to the flags or the notifier by channel; a reconnect re-checks both.
db::pg_listener_handlers listener_handlers_of(services::push_notifier& notifier, maintenance::maintenance_flags& flags,
                                              services::pop_waiters& waiters) {
    return {[&notifier, &flags](const std::string& channel, const std::string& payload) {
                if (channel == maintenance::maintenance_flags::channel)
                    flags.on_notification(payload);
                else
                    notifier.on_notification(payload);
            },
            [&waiters, &flags] {
                waiters.wake_all(services::wake_reason::recheck);
                flags.refresh_soon();
            }};
}

std::optional<crypto::payload_cipher> cipher_of(const config::broker_config& cfg) {
    std::optional<crypto::payload_cipher> cipher;
    if (!cfg.encryption_key.empty()) cipher = crypto::payload_cipher::from_hex_key(cfg.encryption_key);
    log::info("encryption at rest: {}", cipher ? "key loaded (queues with encryptionEnabled are encrypted)"
                                               : "no QUEEN_ENCRYPTION_KEY (encrypted queues refuse pushes)");
    return cipher;
}

metrics::activity_recorder_options recorder_options_of(const config::broker_config& cfg, spool::spool_file& spool,
                                                       metrics::prometheus_metrics& prometheus) {
    return {metrics::broker_identity{host_name(), cfg.port}, cfg.metrics_flush_interval, cfg.metrics_retention_days,
            [&spool] { return spool.pending(); }, [&prometheus](double seconds) { prometheus.loop_lag(seconds); }};
}

services::housekeeper_options housekeeper_options_of(const config::broker_config& cfg, const std::string& conninfo,
                                                     metrics::prometheus_metrics& prometheus) {
    return {conninfo,
            cfg.db_prepared_statements,
            cfg.housekeeping_interval,
            cfg.claim_floor_interval,
            cfg.stats_interval,
            cfg.per_tenant.max_bytes > 0,
            cfg.group_idle,
            cfg.partition_idle,
            [&prometheus](const store::removed_messages& r) {
                if (r.kind == "expired")
                    prometheus.dead_lettered(r.queue, r.group, "expired", r.messages);
                else
                    prometheus.retention_removed(r.queue, r.kind, r.messages);
            }};
}

}  // namespace

broker_services::broker_services(boost::asio::io_context& ioc, const config::broker_config& cfg,
                                 const database_setup& database)
    : spool_(spool_options_of(cfg, database)),
      prometheus_(cfg.metrics_max_queues),
      pool_(ioc.get_executor(), pool_options_of(cfg, database, prometheus_)),
      notifier_(ioc.get_executor(), pool_, waiters_, random_instance_id()),
      fusion_(ioc.get_executor(), pool_, notifier_, fusion_options_of(cfg, prometheus_)),
      ack_fusion_(ioc.get_executor(), pool_, {cfg.ack_fusion_wait, cfg.max_push_items, cfg.ack_fusion_max_inflight}),
      pop_fusion_(ioc.get_executor(), pool_, pop_fusion_options_of(cfg, prometheus_)),
      flags_(ioc.get_executor(), pool_, database.initial_flags(), cfg.maintenance_refresh),
      drainer_(ioc.get_executor(), pool_, notifier_, flags_, spool_, drainer_options_of(cfg, prometheus_)),
      listener_(ioc.get_executor(), database.listener_conninfos().front(),
                {services::push_notifier::channel, maintenance::maintenance_flags::channel},
                listener_handlers_of(notifier_, flags_, waiters_)),
      cipher_(cipher_of(cfg)),
      queue_settings_(pool_, std::chrono::milliseconds(2000)),
      activity_(metrics::current_minute_us()),
      recorder_(ioc.get_executor(), pool_, activity_, waiters_, recorder_options_of(cfg, spool_, prometheus_)),
      scrape_(pool_),
      authentication_(ioc.get_executor(), cfg.auth),
      rate_limiter_(cfg.abuse.rate_per_second, cfg.abuse.rate_burst),
      tenant_rate_limiter_(cfg.per_tenant.rate_per_second, cfg.per_tenant.rate_burst),
      tenant_bytes_(pool_, cfg.per_tenant.max_bytes, cfg.stats_interval),
      parse_budget_(cfg.abuse.json_parse_budget_bytes),
      housekeeping_(ioc.get_executor(),
                    housekeeper_options_of(cfg, database.housekeeping_conninfos().front(), prometheus_)),
      ctx_{cfg,
           pool_,
           fusion_,
           ack_fusion_,
           pop_fusion_,
           notifier_,
           waiters_,
           config::limits{cfg.max_push_items, cfg.max_pop_batch, cfg.max_name_bytes,
                          static_cast<std::size_t>(database.schema().max_payload_depth), cfg.max_json_values,
                          &parse_budget_},
           cfg.embedded ? "embedded" : "external",
           database.schema().database_version,
           flags_,
           spool_,
           drainer_,
           cipher_,
           queue_settings_,
           activity_,
           prometheus_,
           scrape_,
           listener_,
           std::chrono::steady_clock::now(),
           authentication_,
           rate_limiter_,
           http::per_client_slots(cfg.abuse.max_longpolls_per_client),
           tenant_rate_limiter_,
           http::per_client_slots(cfg.per_tenant.max_longpolls),
           tenant_bytes_} {
    const auto& initial = database.initial_flags();
    log::info("spool: {} ({}); push maintenance {}, pop maintenance {}", spool_.path().string(),
              spool_.recovery_summary(), initial.push ? "ON" : "off", initial.pop ? "ON" : "off");
    flags_.on_push_resumed([this] { drainer_.kick(); });
    for (std::size_t i = 1; i < database.listener_conninfos().size(); ++i) {
        shard_listeners_.push_back(std::make_unique<db::pg_listener>(
            ioc.get_executor(), database.listener_conninfos()[i],
            std::vector<std::string>{services::push_notifier::channel, maintenance::maintenance_flags::channel},
            listener_handlers_of(notifier_, flags_, waiters_)));
        shard_housekeepers_.push_back(std::make_unique<services::housekeeper>(
            ioc.get_executor(), housekeeper_options_of(cfg, database.housekeeping_conninfos()[i], prometheus_)));
    }
}

void broker_services::start() {
    listener_.start();
    housekeeping_.start();
    for (auto& l : shard_listeners_) l->start();
    for (auto& h : shard_housekeepers_) h->start();
    flags_.start();
    drainer_.start();
    recorder_.start();
    authentication_.start();
}

void broker_services::stop() {
    listener_.stop();
    housekeeping_.stop();
    for (auto& l : shard_listeners_) l->stop();
    for (auto& h : shard_housekeepers_) h->stop();
    flags_.stop();
    drainer_.stop();
    recorder_.stop();
    authentication_.stop();
    waiters_.wake_all(services::wake_reason::recheck);
}

void broker_services::finish(boost::asio::io_context& ioc) {
    ioc.restart();
    // Other work may still be queued (a timer, a reconnect): the flush alone decides when to stop.
    boost::asio::co_spawn(ioc, recorder_.flush_now(), [&ioc](const std::exception_ptr&) { ioc.stop(); });
    ioc.run_for(std::chrono::seconds(3));
    pool_.close();
}

}  // namespace queen::app
