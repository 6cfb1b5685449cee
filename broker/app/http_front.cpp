#include "app/http_front.hpp"

#include "log/log.hpp"

#include <boost/asio/post.hpp>

namespace queen::app {

std::shared_ptr<http::tls_context_holder> load_tls(const config::broker_config& cfg) {
    if (cfg.tls_cert_file.empty()) return nullptr;
    auto tls = std::make_shared<http::tls_context_holder>(
        http::tls_files{cfg.tls_cert_file, cfg.tls_key_file, cfg.tls_client_ca_file});
    log::info("TLS: {}; TLS 1.2 minimum; {}", http::describe_certificate(*tls->current()),
              cfg.tls_client_ca_file.empty() ? "no client certificates asked for"
                                             : "client certificates required (QUEEN_TLS_CLIENT_CA)");
    return tls;
}

http::server_options server_options_of(const config::broker_config& cfg, std::shared_ptr<http::tls_context_holder> tls,
                                       metrics::prometheus_metrics& prometheus) {
    http::server_options o;
    o.host = cfg.host;
    o.port = cfg.port;
    o.max_body_bytes = cfg.max_body_bytes;
    o.read_timeout = cfg.read_timeout;
    o.idle_timeout = cfg.idle_timeout;
    o.write_timeout = std::chrono::seconds(60);
    o.headers.max_bytes = cfg.abuse.max_header_bytes;
    o.headers.max_count = cfg.abuse.max_header_count;
    o.max_connections_per_client = cfg.abuse.max_connections_per_client;
    o.tls = std::move(tls);
    o.on_request_started = [&prometheus] { prometheus.http_started(); };
    o.on_request_finished = [&prometheus](std::string_view route, std::string_view method, unsigned status,
                                          double seconds) {
        prometheus.http_finished();
        prometheus.http_request(route, method, status, seconds);
    };
    return o;
}

tls_reloader::tls_reloader(boost::asio::io_context& ioc, std::shared_ptr<http::tls_context_holder> tls)
    : tls_(std::move(tls)), signals_(ioc) {
    if (!tls_) return;
    signals_.add(SIGHUP);
    wait();
}

void tls_reloader::stop() {
    boost::asio::post(signals_.get_executor(), [this] {
        boost::system::error_code ignored;
        signals_.cancel(ignored);
    });
}

void tls_reloader::wait() {
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

}  // namespace queen::app
