#pragma once
// On SIGINT or SIGTERM: stop taking work, then stop the io_context once no request is in
// flight (connections idle between requests are not waited for), or after 5 s.
#include "http/server.hpp"

#include <utility>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>

namespace queen::app {

class graceful_stop {
public:
    // `stop_taking_work` runs once, on the io_context, when the signal comes.
    graceful_stop(boost::asio::io_context& ioc, const http::server& server, std::function<void()> stop_taking_work);

private:
    void poll();

    boost::asio::io_context& ioc_;
    const http::server& server_;
    std::function<void()> stop_taking_work_;
    boost::asio::signal_set signals_;
    boost::asio::steady_timer grace_;
    std::chrono::steady_clock::time_point deadline_;
};

}  // namespace queen::app
