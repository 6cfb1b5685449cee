#include "app/run.hpp"

#include "api/routes.hpp"
#include "api/shared/failure_answer.hpp"
#include "app/broker_services.hpp"
#include "app/database_setup.hpp"
#include "app/graceful_stop.hpp"
#include "app/http_front.hpp"
#include "app/startup_signals.hpp"
#include "config/config.hpp"
#include "http/router.hpp"
#include "http/server.hpp"
#include "log/log.hpp"
#include "util/open_files_limit.hpp"

#include <utility>
#include <boost/asio/io_context.hpp>

#include <thread>
#include <vector>

namespace queen::app {

namespace {

// The configuration, logged (secrets left out) with its warnings.
config::broker_config load_configuration() {
    auto cfg = config::from_environment();
    log::info("queen broker {} starting", QUEEN_VERSION);
    log::info("{}", config::describe(cfg));
    log::info("{}", config::describe(cfg.auth));
    log::info("{}", util::raise_open_files_limit());
    for (const auto& warning : cfg.warnings) log::warn("{}", warning);
    return cfg;
}

// Runs the io_context on `threads` threads (this one included) until it stops.
void run_io(boost::asio::io_context& ioc, std::size_t threads) {
    std::vector<std::thread> pool;
    for (std::size_t i = 1; i < threads; ++i) pool.emplace_back([&ioc] { ioc.run(); });
    ioc.run();
    for (auto& t : pool) t.join();
}

}  // namespace

int run() {
    startup_signals signals_while_starting;
    const auto cfg = load_configuration();
    const auto tls = load_tls(cfg);
    const database_setup database(cfg);

    startup_signals::check();
    boost::asio::io_context ioc(static_cast<int>(cfg.threads));
    // Declared after the io_context: destroyed (their threads joined) before it.
    broker_services services(ioc, cfg, database);
    // While auth is off, a browser must address the broker by its own name (DNS rebinding).
    http::cors_policy browsers(cfg.cors_origins, tls ? "https" : "http",
                               cfg.auth.enabled ? std::nullopt : std::optional(cfg.allowed_hosts));
    http::router router(api::answer_failure, std::move(browsers));
    api::register_routes(router, services.context());
    http::server server(ioc, router, server_options_of(cfg, tls, services.prometheus()));

    server.start();
    services.start();
    log::info("listening on {}://{}:{}", tls ? "https" : "http", cfg.host, server.port());
    tls_reloader reload_tls(ioc, tls);
    graceful_stop stopper(ioc, server, [&server, &services, &reload_tls] {
        server.stop();
        services.stop();
        reload_tls.stop();
    });
    signals_while_starting.hand_over();
    run_io(ioc, cfg.threads);
    services.finish(ioc);
    log::info("stopped");
    return 0;
}

}  // namespace queen::app
