#pragma once
// The HTTP side of the broker as configured: the TLS context (reloaded on SIGHUP) and the
// server's options.
#include "config/config.hpp"
#include "http/server.hpp"
#include "http/tls_context.hpp"
#include "metrics/prometheus_metrics.hpp"

#include <utility>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <memory>

namespace queen::app {

// The HTTPS context from QUEEN_TLS_*, or null for plain HTTP; throws std::invalid_argument
// naming a file that cannot be used.
std::shared_ptr<http::tls_context_holder> load_tls(const config::broker_config& cfg);

// The server's limits, timeouts and TLS from the configuration; requests are counted in
// `prometheus`.
http::server_options server_options_of(const config::broker_config& cfg, std::shared_ptr<http::tls_context_holder> tls,
                                       metrics::prometheus_metrics& prometheus);

// On SIGHUP: rebuilds the TLS context from the same files for new connections; open ones keep
// theirs. A reload that fails is logged and the context in use stays. Does nothing without TLS.
class tls_reloader {
public:
    tls_reloader(boost::asio::io_context& ioc, std::shared_ptr<http::tls_context_holder> tls);
    // Stops listening for SIGHUP (on the io_context, like the signal handler itself).
    void stop();

private:
    void wait();

    std::shared_ptr<http::tls_context_holder> tls_;
    boost::asio::signal_set signals_;
};

}  // namespace queen::app
