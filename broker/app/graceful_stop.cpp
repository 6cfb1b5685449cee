#include "app/graceful_stop.hpp"

#include "log/log.hpp"

namespace queen::app {

graceful_stop::graceful_stop(boost::asio::io_context& ioc, const http::server& server,
                             std::function<void()> stop_taking_work)
    : ioc_(ioc),
      server_(server),
      stop_taking_work_(std::move(stop_taking_work)),
      signals_(ioc, SIGINT, SIGTERM),
      grace_(ioc) {
    signals_.async_wait([this](boost::system::error_code ec, int sig) {
        if (ec) return;
        log::info("signal {}: stopping (in-flight requests get up to 5 s)", sig);
        stop_taking_work_();
        deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        poll();
    });
}

void graceful_stop::poll() {
    const auto in_flight = server_.requests_in_flight();
    if (in_flight == 0 || std::chrono::steady_clock::now() >= deadline_) {
        if (in_flight > 0) log::warn("stopping after 5 s with {} request(s) still in flight", in_flight);
        ioc_.stop();
        return;
    }
    grace_.expires_after(std::chrono::milliseconds(100));
    grace_.async_wait([this](boost::system::error_code) { poll(); });
}

}  // namespace queen::app
