#pragma once
// The HTTP/1.1 server: accepts connections and runs one session coroutine per connection on
// its own strand. Sessions are bounded: a fresh parser per request with a body limit, a
// timeout on every read and write, header limits, keep-alive, and a bound on the connections
// one client address may hold open. With a TLS context holder it serves HTTPS: each new
// connection takes the holder's current context. stop() closes the listener; requests in
// flight finish (requests_in_flight tells when).
#include "http/header_limits.hpp"
#include "http/per_client_slots.hpp"
#include "http/router.hpp"
#include "http/tls_context.hpp"

#include <utility>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace queen::http {

struct server_options {
    std::string host = "0.0.0.0";
    unsigned short port = 6632;
    std::size_t max_body_bytes = 64u << 20;
    std::chrono::seconds read_timeout{60};
    std::chrono::seconds idle_timeout{75};
    std::chrono::seconds write_timeout{60};
    header_limits headers;                       // 431 beyond them
    std::size_t max_connections_per_client = 0;  // 429 beyond it; 0: any number
    std::chrono::seconds tls_shutdown_timeout{5};
    // Set: HTTPS with the holder's current context; null: plain HTTP.
    std::shared_ptr<const tls_context_holder> tls;
    // Optional observers (metrics): a request read and about to be dispatched; the same
    // request's answer ready (route template, method, status, seconds until the answer was
    // ready, parked time excluded). Called before the answer is written, so that a client
    // holding its answer finds it counted by the next scrape.
    std::function<void()> on_request_started;
    std::function<void(std::string_view route, std::string_view method, unsigned status, double seconds)>
        on_request_finished;
};

class server {
public:
    // Binds and listens; throws std::system_error when the address cannot be bound.
    server(boost::asio::io_context& ioc, const router& routes, server_options options);
    void start();
    void stop();
    unsigned short port() const noexcept { return port_; }
    // Requests read and not yet answered (a connection waiting for its next request is not one).
    std::size_t requests_in_flight() const noexcept { return in_flight_->load(); }

private:
    boost::asio::awaitable<void> accept_loop();

    boost::asio::io_context& ioc_;
    const router& routes_;
    server_options options_;
    boost::asio::ip::tcp::acceptor acceptor_;
    unsigned short port_ = 0;
    std::shared_ptr<std::atomic<std::size_t>> in_flight_ = std::make_shared<std::atomic<std::size_t>>(0);
    per_client_slots connections_;
};

}  // namespace queen::http
