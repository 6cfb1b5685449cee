#include "auth/jwks_fetch.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/core.h>

#include <stdexcept>

namespace queen::auth {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;

namespace {

struct http_url {
    std::string host;
    std::string port = "80";
    std::string target = "/";
};

http_url parse_url(const std::string& url) {
    constexpr std::string_view scheme = "http://";
    if (url.rfind(scheme, 0) != 0) throw std::runtime_error("JWT_JWKS_URL must be an http:// URL");
    std::string rest = url.substr(scheme.size());
    http_url out;
    const auto slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    if (slash != std::string::npos) out.target = rest.substr(slash);
    if (authority.find('@') != std::string::npos) throw std::runtime_error("JWT_JWKS_URL must not carry credentials");
    if (!authority.empty() && authority.front() == '[') {  // [v6 address]:port
        const auto close = authority.find(']');
        if (close == std::string::npos) throw std::runtime_error("JWT_JWKS_URL has a malformed host");
        out.host = authority.substr(1, close - 1);
        if (close + 1 < authority.size() && authority[close + 1] == ':') out.port = authority.substr(close + 2);
    } else if (const auto colon = authority.rfind(':'); colon != std::string::npos) {
        out.host = authority.substr(0, colon);
        out.port = authority.substr(colon + 1);
    } else {
        out.host = authority;
    }
    if (out.host.empty() || out.port.empty()) throw std::runtime_error("JWT_JWKS_URL has no host");
    return out;
}

}  // namespace

asio::awaitable<std::string> fetch_jwks(asio::any_io_executor executor, const std::string& url,
                                        std::chrono::milliseconds timeout) {
    const http_url target = parse_url(url);
    asio::ip::tcp::resolver resolver(executor);
    beast::tcp_stream stream(executor);
    auto endpoints = co_await resolver.async_resolve(target.host, target.port, asio::use_awaitable);
    // One deadline for connecting, sending and reading the answer. Name resolution runs in
    // the system resolver, bounded by its own timeouts (resolv.conf).
    stream.expires_after(timeout);
    co_await stream.async_connect(endpoints, asio::use_awaitable);
    bhttp::request<bhttp::empty_body> req{bhttp::verb::get, target.target, 11};
    req.set(bhttp::field::host, target.host);
    req.set(bhttp::field::accept, "application/json");
    req.set(bhttp::field::user_agent, "queen-broker");
    co_await bhttp::async_write(stream, req, asio::use_awaitable);
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(max_jwks_bytes);
    co_await bhttp::async_read(stream, buffer, parser, asio::use_awaitable);
    beast::error_code ignored;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    const auto& res = parser.get();
    if (res.result() != bhttp::status::ok)
        throw std::runtime_error(fmt::format("JWT_JWKS_URL answered HTTP {}", res.result_int()));
    co_return res.body();
}

}  // namespace queen::auth
