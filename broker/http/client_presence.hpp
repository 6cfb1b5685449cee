#pragma once
// The session's knowledge of whether its client is still there, for handlers that wait
// (a parked pop): they ask to be told when the client goes, and never touch the socket.
#include <utility>
#include <boost/asio/ip/tcp.hpp>

#include <functional>
#include <memory>
#include <string>

namespace queen::http {

class client_presence {
public:
    explicit client_presence(boost::asio::ip::tcp::socket& socket);

    // The client's IP address as text ("" when the socket had none), the key of the
    // per-client limits.
    const std::string& address() const noexcept { return address_; }

    // Calls on_gone (on the connection's strand) once the client has closed the connection or
    // it failed. A pipelined request does not count as gone. Replaces an earlier watch.
    void notify_when_gone(std::function<void()> on_gone);

    // Ends the watch; on_gone is not called afterwards.
    void stop_watching();

private:
    void arm(std::shared_ptr<std::function<void()>> on_gone);

    boost::asio::ip::tcp::socket& socket_;
    std::string address_;
    std::shared_ptr<std::function<void()>> watching_;
};

}  // namespace queen::http
