// The queen broker: reads its configuration, starts (or connects to) PostgreSQL, applies the
// schema, and serves the HTTP API (HTTPS with QUEEN_TLS_CERT/KEY; SIGHUP reloads them) until
// SIGINT/SIGTERM. main() only wires things together.
#include "api/failure_answer.hpp"
#include "api/routes.hpp"
#include "auth/authenticator.hpp"
#include "app/broker_context.hpp"
#include "config/config.hpp"
#include "core/housekeeper.hpp"
#include "core/memory_budget.hpp"
#include "core/open_files_limit.hpp"
#include "core/queue_settings.hpp"
#include "crypto/payload_cipher.hpp"
#include "core/pop_waiters.hpp"
#include "core/push_fusion.hpp"
#include "core/push_notifier.hpp"
#include "db/conninfo.hpp"
#include "db/pg_listener.hpp"
#include "db/pg_pool.hpp"
#include "embedded/embedded_postgres.hpp"
#include "http/server.hpp"
#include "http/tls_context.hpp"
#include "log/log.hpp"
#include "maintenance/maintenance_flags.hpp"
#include "metrics/activity_counters.hpp"
#include "metrics/activity_recorder.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "metrics/scrape_cache.hpp"
#include "schema/codec_path.hpp"
#include "schema/migrator.hpp"
#include "spool/spool_drainer.hpp"
#include "spool/spool_file.hpp"

#include <utility>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <optional>
#include <random>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace queen;

namespace {

std::string random_instance_id() {
    std::random_device rd;
    return fmt::format("{:08x}{:08x}", rd(), rd());
}

// The database to use: the configured one, or the embedded server started (or adopted) here.
std::string start_database(const config::broker_config& cfg, std::optional<embedded::embedded_postgres>& embedded_db) {
    if (!cfg.embedded) return cfg.conninfo;
    embedded::embedded_options opts;
    if (!cfg.embedded_data_dir.empty()) opts.data_dir = cfg.embedded_data_dir;
    embedded_db.emplace(opts);
    log::info("embedded PostgreSQL ready; inspect it with: {}", embedded_db->psql_command());
    return embedded_db->conninfo();
}

// The hardening every connection to `database` gets (docs/deployment.md); sslmode only
// toward an external server (the embedded one is reached over its Unix socket).
db::connection_settings connection_settings_of(const config::broker_config& cfg) {
    db::connection_settings s;
    s.keepalives_idle = cfg.db_keepalives_idle;
    s.keepalives_interval = cfg.db_keepalives_interval;
    s.keepalives_count = cfg.db_keepalives_count;
    s.tcp_user_timeout = cfg.db_tcp_user_timeout;
    if (!cfg.embedded) s.sslmode = cfg.db_sslmode;
    s.statement_timeout = cfg.db_statement_timeout;
    return s;
}

// Applies (or only checks) the schema and holds the database's codec path to QUEEN_EXTENSION.
schema::migration_report prepare_schema(const config::broker_config& cfg, const std::string& conninfo) {
    auto report = cfg.apply_schema ? schema::apply(conninfo, cfg.db_startup_wait)
                                   : schema::check(conninfo, cfg.db_startup_wait);
    log::info("schema version {} ({} migrations applied now, procedures {}); payloads may nest {} levels",
              report.database_version, report.applied, report.procedures_applied ? "applied" : "unchanged",
              report.max_payload_depth);
    auto codec = schema::detect_codec_path(conninfo);
    log::info("{}", schema::describe(codec));
    schema::enforce(cfg.extension, codec);
    return report;
}

// On SIGINT or SIGTERM: stop taking work, then stop the io_context once no connection is
// left, or after 5 s.
class graceful_stop {
public:
    graceful_stop(boost::asio::io_context& ioc, const http::server& server, std::function<void()> stop_services)
        : ioc_(ioc), server_(server), stop_services_(std::move(stop_services)), signals_(ioc, SIGINT, SIGTERM),
          grace_(ioc) {
        signals_.async_wait([this](boost::system::error_code ec, int sig) {
            if (ec) return;
            log::info("signal {}: stopping (in-flight requests get up to 5 s)", sig);
            stop_services_();
            deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            poll();
        });
    }

private:
    void poll() {
        if (server_.active_sessions() == 0 || std::chrono::steady_clock::now() >= deadline_) {
            ioc_.stop();
            return;
        }
        grace_.expires_after(std::chrono::milliseconds(100));
        grace_.async_wait([this](boost::system::error_code) { poll(); });
    }

    boost::asio::io_context& ioc_;
    const http::server& server_;
    std::function<void()> stop_services_;
    boost::asio::signal_set signals_;
    boost::asio::steady_timer grace_;
    std::chrono::steady_clock::time_point deadline_;
};

// The HTTPS context from QUEEN_TLS_*, or null for plain HTTP; throws std::invalid_argument
// naming a file that cannot be used.
std::shared_ptr<http::tls_context_holder> load_tls(const config::broker_config& cfg) {
    if (cfg.tls_cert_file.empty()) return nullptr;
    auto tls = std::make_shared<http::tls_context_holder>(
        http::tls_files{cfg.tls_cert_file, cfg.tls_key_file, cfg.tls_client_ca_file});
    log::info("TLS: {}; TLS 1.2 minimum; {}", http::describe_certificate(*tls->current()),
              cfg.tls_client_ca_file.empty() ? "no client certificates asked for"
                                             : "client certificates required (QUEEN_TLS_CLIENT_CA)");
    return tls;
}

// On SIGHUP: rebuilds the TLS context from the same files for new connections; open ones keep
// theirs. A reload that fails is logged and the context in use stays.
class tls_reloader {
public:
    tls_reloader(boost::asio::io_context& ioc, std::shared_ptr<http::tls_context_holder> tls)
        : tls_(std::move(tls)), signals_(ioc) {
        if (!tls_) return;
        signals_.add(SIGHUP);
        wait();
    }
    // Stops listening for SIGHUP (on the io_context, like the signal handler itself).
    void stop() {
        boost::asio::post(signals_.get_executor(), [this] {
            boost::system::error_code ignored;
            signals_.cancel(ignored);
        });
    }

private:
    void wait() {
        signals_.async_wait([this](boost::system::error_code ec, int) {
            if (ec) return;
            try {
                log::info("TLS certificate reloaded: {}", tls_->reload());
            } catch (const std::exception& e) {
                log::error("TLS: SIGHUP: {}; the certificate loaded before stays in use", e.what());
            }
            wait();
        });
    }

    std::shared_ptr<http::tls_context_holder> tls_;
    boost::asio::signal_set signals_;
};

// This host's name, as the activity rows name the broker ("localhost" when unknown).
std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
    return name;
}

// The last minute's counts, flushed after serving stopped (at most 3 s).
void flush_activity_at_exit(boost::asio::io_context& ioc, metrics::activity_recorder& recorder) {
    ioc.restart();
    boost::asio::co_spawn(ioc, recorder.flush_now(), boost::asio::detached);
    ioc.run_for(std::chrono::seconds(3));
}

// Runs the io_context on `threads` threads (this one included) until it stops.
void run_io(boost::asio::io_context& ioc, std::size_t threads) {
    std::vector<std::thread> pool;
    for (std::size_t i = 1; i < threads; ++i) pool.emplace_back([&ioc] { ioc.run(); });
    ioc.run();
    for (auto& t : pool) t.join();
}

int run() {
    auto cfg = config::from_environment();
    log::info("queen broker {} starting", QUEEN_VERSION);
    log::info("{}", config::describe(cfg));
    log::info("{}", config::describe(cfg.auth));
    log::info("{}", core::raise_open_files_limit());
    for (const auto& warning : cfg.warnings) log::warn("{}", warning);
    const auto tls = load_tls(cfg);
    std::optional<embedded::embedded_postgres> embedded_db;
    const std::string database = start_database(cfg, embedded_db);
    const auto hardening = connection_settings_of(cfg);
    const std::string conninfo = db::hardened_conninfo(database, hardening, db::connection_role::maintenance);
    const std::string request_conninfo = db::hardened_conninfo(database, hardening, db::connection_role::requests);
    const std::string listener_conninfo = db::hardened_conninfo(database, hardening, db::connection_role::listener);
    const auto report = prepare_schema(cfg, conninfo);

    // Maintenance flags and the spool (docs/maintenance-and-spool.md). A spool left non-empty
    // by an earlier run is recovered here and drained once serving starts.
    auto initial_flags = maintenance::maintenance_flags::load(conninfo);

    boost::asio::io_context ioc(static_cast<int>(cfg.threads));
    // Declared after the io_context: destroyed (its thread joined) before it.
    spool::spool_file spool(
        spool::spool_options{cfg.spool_dir, cfg.port, initial_flags.database_id, cfg.spool_max_bytes});
    log::info("spool: {} ({}); push maintenance {}, pop maintenance {}", spool.path().string(),
              spool.recovery_summary(), initial_flags.push ? "ON" : "off", initial_flags.pop ? "ON" : "off");
    auto executor = ioc.get_executor();
    const auto started_at = std::chrono::steady_clock::now();
    metrics::prometheus_metrics prometheus(cfg.metrics_max_queues);
    db::pg_pool_options pool_options;
    pool_options.conninfo = request_conninfo;
    pool_options.size = cfg.pool_size;
    pool_options.on_acquire_waited = [&prometheus](std::chrono::steady_clock::duration d) {
        prometheus.pool_waited(std::chrono::duration<double>(d).count());
    };
    pool_options.on_statement_failed = [&prometheus](const std::string& sqlstate) { prometheus.db_error(sqlstate); };
    db::pg_pool pool(executor, pool_options);
    core::pop_waiters waiters;
    core::push_notifier notifier(executor, pool, waiters, random_instance_id());
    core::push_fusion fusion(
        executor, pool, notifier,
        core::push_fusion_options{cfg.push_fusion_wait, cfg.push_fusion_max_items, cfg.push_fusion_max_inflight,
                                  [&prometheus](std::size_t items, std::size_t requests,
                                                std::chrono::steady_clock::duration d) {
                                      prometheus.fused_call(items, requests, std::chrono::duration<double>(d).count());
                                  }});
    maintenance::maintenance_flags flags(executor, pool, initial_flags, cfg.maintenance_refresh);
    spool::drainer_options drainer_options;
    drainer_options.on_drained_item = [&prometheus](const std::string& queue, bool stored) {
        if (stored) prometheus.published(queue, 1);
        else prometheus.duplicates(queue, 1);
    };
    spool::spool_drainer drainer(executor, pool, notifier, flags, spool, drainer_options);
    flags.on_push_resumed([&drainer] { drainer.kick(); });
    db::pg_listener listener(executor, listener_conninfo, {core::push_notifier::channel, maintenance::maintenance_flags::channel},
                             db::pg_listener_handlers{
                                 [&notifier, &flags](const std::string& channel, const std::string& payload) {
                                     if (channel == maintenance::maintenance_flags::channel)
                                         flags.on_notification(payload);
                                     else
                                         notifier.on_notification(payload);
                                 },
                                 [&waiters, &flags] {
                                     waiters.wake_all(core::wake_reason::recheck);
                                     flags.refresh_soon();
                                 }});

    std::optional<crypto::payload_cipher> cipher;
    if (!cfg.encryption_key.empty()) cipher = crypto::payload_cipher::from_hex_key(cfg.encryption_key);
    log::info("encryption at rest: {}", cipher ? "key loaded (queues with encryptionEnabled are encrypted)"
                                                : "no QUEEN_ENCRYPTION_KEY (encrypted queues refuse pushes)");
    core::queue_settings queue_settings(pool, std::chrono::milliseconds(2000));
    metrics::activity_counters activity(metrics::current_minute_us());
    metrics::activity_recorder recorder(
        executor, pool, activity, waiters,
        metrics::activity_recorder_options{metrics::broker_identity{host_name(), cfg.port}, cfg.metrics_flush_interval,
                                           cfg.metrics_retention_days, [&spool] { return spool.pending(); },
                                           [&prometheus](double seconds) { prometheus.loop_lag(seconds); }});
    metrics::scrape_cache scrape(pool);
    auth::authenticator authentication(executor, cfg.auth);
    core::rate_limiter rate_limiter(cfg.abuse.rate_per_second, cfg.abuse.rate_burst);
    core::memory_budget parse_budget(cfg.abuse.json_parse_budget_bytes);
    app::broker_context ctx{cfg,
                            pool,
                            fusion,
                            notifier,
                            waiters,
                            config::limits{cfg.max_push_items, cfg.max_pop_batch, cfg.max_name_bytes,
                                           static_cast<std::size_t>(report.max_payload_depth), cfg.max_json_values,
                                           &parse_budget},
                            cfg.embedded ? "embedded" : "external",
                            report.database_version,
                            flags,
                            spool,
                            drainer,
                            cipher,
                            queue_settings,
                            activity,
                            prometheus,
                            scrape,
                            listener,
                            started_at,
                            authentication,
                            rate_limiter,
                            http::per_client_slots(cfg.abuse.max_longpolls_per_client)};
    http::router router(api::answer_failure, http::cors_policy(cfg.cors_origins));
    api::register_routes(router, ctx);
    http::server_options server_options;
    server_options.host = cfg.host;
    server_options.port = cfg.port;
    server_options.max_body_bytes = cfg.max_body_bytes;
    server_options.read_timeout = cfg.read_timeout;
    server_options.idle_timeout = cfg.idle_timeout;
    server_options.write_timeout = std::chrono::seconds(60);
    server_options.headers.max_bytes = cfg.abuse.max_header_bytes;
    server_options.headers.max_count = cfg.abuse.max_header_count;
    server_options.max_connections_per_client = cfg.abuse.max_connections_per_client;
    server_options.tls = tls;
    server_options.on_request_started = [&prometheus] { prometheus.http_started(); };
    server_options.on_request_finished = [&prometheus](std::string_view route, std::string_view method,
                                                       unsigned status, double seconds) {
        prometheus.http_finished();
        prometheus.http_request(route, method, status, seconds);
    };
    http::server server(ioc, router, server_options);
    core::housekeeper housekeeping(
        executor, core::housekeeper_options{conninfo, cfg.housekeeping_interval, cfg.claim_floor_interval,
                                            cfg.stats_interval, cfg.group_idle, cfg.partition_idle,
                                            [&prometheus](const store::removed_messages& r) {
                                                if (r.kind == "expired")
                                                    prometheus.dead_lettered(r.queue, r.group, "expired", r.messages);
                                                else
                                                    prometheus.retention_removed(r.queue, r.kind, r.messages);
                                            }});
    server.start();
    listener.start();
    housekeeping.start();
    flags.start();
    drainer.start();
    recorder.start();
    authentication.start();
    log::info("listening on {}://{}:{}", tls ? "https" : "http", cfg.host, server.port());
    tls_reloader reload_tls(ioc, tls);

    graceful_stop stopper(ioc, server, [&] {
        server.stop();
        listener.stop();
        housekeeping.stop();
        flags.stop();
        drainer.stop();
        recorder.stop();
        authentication.stop();
        reload_tls.stop();
        waiters.wake_all(core::wake_reason::recheck);
    });
    run_io(ioc, cfg.threads);
    flush_activity_at_exit(ioc, recorder);
    pool.close();
    log::info("stopped");
    return 0;
}

}  // namespace

int main() {
    try {
        return run();
    } catch (const std::invalid_argument& e) {
        log::error("configuration error: {}", e.what());
        return 2;
    } catch (const std::exception& e) {
        log::error("fatal: {}", e.what());
        return 1;
    }
}
