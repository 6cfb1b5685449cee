#include "http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http.hpp>
#include <fmt/core.h>

namespace queen::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using asio::redirect_error;
using asio::use_awaitable;

std::string url_encode(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
            c == '.' || c == '~')
            out += static_cast<char>(c);
        else
            out += fmt::format("%{:02X}", c);
    }
    return out;
}

std::string http_result::describe() const {
    if (ec) return fmt::format("transport error: {}", ec.message());
    std::string excerpt = body.substr(0, 300);
    for (auto& c : excerpt)
        if (c == '\n' || c == '\r') c = ' ';
    return fmt::format("HTTP {}{}{}", status, excerpt.empty() ? "" : " body: ", excerpt);
}

http_client::http_client(asio::any_io_executor strand, asio::ip::tcp::resolver::results_type endpoints,
                         std::string host_header, std::vector<std::pair<std::string, std::string>> headers)
    : stream_(strand),
      timer_(strand),
      endpoints_(std::move(endpoints)),
      host_header_(std::move(host_header)),
      headers_(std::move(headers)) {}

void http_client::close() {
    beast::error_code ignored;
    stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    stream_.close();
    buffer_.clear();
    connected_ = false;
}

void http_client::cancel() {
    cancelled_ = true;
    asio::post(stream_.get_executor(), [this] {
        stream_.cancel();
        timer_.cancel();
    });
}

asio::awaitable<void> http_client::sleep(std::chrono::milliseconds d) {
    if (cancelled_ || d.count() <= 0) co_return;
    timer_.expires_after(d);
    beast::error_code ec;
    co_await timer_.async_wait(redirect_error(use_awaitable, ec));
}

asio::awaitable<void> http_client::sleep_until(std::chrono::steady_clock::time_point t) {
    if (cancelled_ || t <= std::chrono::steady_clock::now()) co_return;
    timer_.expires_at(t);
    beast::error_code ec;
    co_await timer_.async_wait(redirect_error(use_awaitable, ec));
}

asio::awaitable<http_result> http_client::request(bhttp::verb verb, const std::string& target, const std::string& body,
                                                  std::chrono::milliseconds timeout) {
    http_result out;
    if (cancelled_) {
        out.ec = asio::error::operation_aborted;
        co_return out;
    }
    if (!connected_) {
        stream_.expires_after(timeout);
        co_await stream_.async_connect(endpoints_, redirect_error(use_awaitable, out.ec));
        if (out.ec) {
            close();
            co_return out;
        }
        beast::error_code ignored;
        stream_.socket().set_option(asio::ip::tcp::no_delay(true), ignored);
        connected_ = true;
        ++connects_;
    }
    bhttp::request<bhttp::string_body> req(verb, target, 11);
    req.set(bhttp::field::host, host_header_);
    req.set(bhttp::field::user_agent, "queen_bench");
    for (const auto& [name, value] : headers_) req.set(name, value);
    req.keep_alive(true);
    if (verb == bhttp::verb::post || !body.empty()) {
        req.set(bhttp::field::content_type, "application/json");
        req.body() = body;
        req.prepare_payload();
    }
    stream_.expires_after(timeout);
    if (cancelled_) {  // cancel() may have run while we connected
        out.ec = asio::error::operation_aborted;
        co_return out;
    }
    co_await bhttp::async_write(stream_, req, redirect_error(use_awaitable, out.ec));
    if (out.ec) {
        close();
        co_return out;
    }
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(std::uint64_t(1) << 32);
    co_await bhttp::async_read(stream_, buffer_, parser, redirect_error(use_awaitable, out.ec));
    if (out.ec) {
        close();
        co_return out;
    }
    auto& res = parser.get();
    out.status = res.result_int();
    if (auto it = res.find(bhttp::field::retry_after); it != res.end()) out.retry_after = std::string(it->value());
    out.body = std::move(res.body());
    if (!res.keep_alive()) close();
    stream_.expires_never();
    co_return out;
}

}  // namespace queen::bench
