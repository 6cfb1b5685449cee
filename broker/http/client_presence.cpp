#include "http/client_presence.hpp"

#include <sys/socket.h>

#include <cerrno>

namespace queen::http {

client_presence::client_presence(boost::asio::ip::tcp::socket& socket) : socket_(socket) {
    boost::system::error_code ec;
    const auto peer = socket_.remote_endpoint(ec);
    if (!ec) {
        // An IPv4 client of a dual-stack listener is the same client as over IPv4.
        const auto a = peer.address();
        address_ = a.is_v6() && a.to_v6().is_v4_mapped()
                       ? boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, a.to_v6()).to_string()
                       : a.to_string();
    }
}

void client_presence::notify_when_gone(std::function<void()> on_gone) {
    watching_ = std::make_shared<std::function<void()>>(std::move(on_gone));
    arm(watching_);
}

void client_presence::stop_watching() {
    if (!watching_) return;
    watching_.reset();
    boost::system::error_code ignored;
    socket_.cancel(ignored);
}

// The peek never blocks: a readiness report can be spurious, and then the watch re-arms.
void client_presence::arm(std::shared_ptr<std::function<void()>> on_gone) {
    socket_.async_wait(boost::asio::socket_base::wait_read, [this, on_gone](boost::system::error_code ec) {
        if (ec || watching_ != on_gone) return;  // cancelled, or a newer watch
        char byte;
        ssize_t n = ::recv(socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            arm(on_gone);
            return;
        }
        if (n <= 0) (*on_gone)();
        // n > 0: the client pipelined another request; it is still there.
    });
}

}  // namespace queen::http
