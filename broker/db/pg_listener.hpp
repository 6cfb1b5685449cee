#pragma once
// A dedicated connection that LISTENs on channels and delivers notifications; reconnects
// (asynchronously, with back-off) after a failure and reports each (re)connection, so that
// parked waiters can re-check what they may have missed.
#include <utility>
#include <boost/asio/any_io_executor.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace queen::db {

struct pg_listener_handlers {
    std::function<void(const std::string& channel, const std::string& payload)> on_notify;
    std::function<void()> on_connected;  // after every successful LISTEN (first and reconnects)
};

class pg_listener {
public:
    pg_listener(boost::asio::any_io_executor executor, std::string conninfo, std::vector<std::string> channels,
                pg_listener_handlers handlers);
    ~pg_listener();
    void start();
    void stop();
    // Whether the LISTEN connection is up (it listens on every channel).
    bool connected() const noexcept;

private:
    std::shared_ptr<class pg_listener_state> state_;
};

}  // namespace queen::db
