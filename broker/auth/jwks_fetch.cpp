#include "auth/jwks_fetch.hpp"

#include <fmt/core.h>
#include <openssl/ssl.h>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <stdexcept>

namespace queen::auth {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;

namespace {

struct http_url {
    bool tls = false;
    std::string host;
    std::string port;
    std::string target = "/";
};

http_url parse_url(const std::string& url) {
    http_url out;
    std::string rest;
    if (url.rfind("https://", 0) == 0) {
        out.tls = true;
        out.port = "443";
        rest = url.substr(8);
    } else if (url.rfind("http://", 0) == 0) {
        out.port = "80";
        rest = url.substr(7);
    } else {
        throw std::runtime_error("JWT_JWKS_URL must be an http:// or https:// URL");
    }
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

// Sends the GET and reads the answer on an open stream (plain or TLS).
template <class Stream>
asio::awaitable<bhttp::response<bhttp::string_body>> exchange(Stream& stream, const http_url& target) {
    bhttp::request<bhttp::empty_body> req{bhttp::verb::get, target.target, 11};
    req.set(bhttp::field::host, target.host);
    req.set(bhttp::field::accept, "application/json");
    req.set(bhttp::field::user_agent, "queen-broker");
    co_await bhttp::async_write(stream, req, asio::use_awaitable);
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(max_jwks_bytes);
    co_await bhttp::async_read(stream, buffer, parser, asio::use_awaitable);
    co_return parser.release();
}

// A client context that trusts OpenSSL's default roots (the system's store, or SSL_CERT_FILE /
// SSL_CERT_DIR when set) and speaks TLS 1.2 at least.
asio::ssl::context client_context() {
    asio::ssl::context ctx(asio::ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
    ctx.set_default_verify_paths();
    ctx.set_verify_mode(asio::ssl::verify_peer);
    return ctx;
}

}  // namespace

asio::awaitable<std::string> fetch_jwks(asio::any_io_executor executor, const std::string& url,
                                        std::chrono::milliseconds timeout) {
    const http_url target = parse_url(url);
    asio::ip::tcp::resolver resolver(executor);
    auto endpoints = co_await resolver.async_resolve(target.host, target.port, asio::use_awaitable);
    bhttp::response<bhttp::string_body> res;
    // One deadline for connecting, the handshake, sending and reading the answer. Name
    // resolution runs in the system resolver, bounded by its own timeouts (resolv.conf).
    if (target.tls) {
        asio::ssl::context ctx = client_context();
        beast::ssl_stream<beast::tcp_stream> stream(executor, ctx);
        // The certificate must name the URL's host (DNS name or IP address).
        stream.set_verify_callback(asio::ssl::host_name_verification(target.host));
        boost::system::error_code not_ip;
        asio::ip::make_address(target.host, not_ip);
        if (not_ip && !SSL_set_tlsext_host_name(stream.native_handle(), target.host.c_str()))
            throw std::runtime_error("JWT_JWKS_URL: cannot set the TLS server name");
        auto& tcp = beast::get_lowest_layer(stream);
        tcp.expires_after(timeout);
        co_await tcp.async_connect(endpoints, asio::use_awaitable);
        co_await stream.async_handshake(asio::ssl::stream_base::client, asio::use_awaitable);
        res = co_await exchange(stream, target);
        beast::error_code ignored;
        tcp.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    } else {
        beast::tcp_stream stream(executor);
        stream.expires_after(timeout);
        co_await stream.async_connect(endpoints, asio::use_awaitable);
        res = co_await exchange(stream, target);
        beast::error_code ignored;
        stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    }
    if (res.result() != bhttp::status::ok)
        throw std::runtime_error(fmt::format("JWT_JWKS_URL answered HTTP {}", res.result_int()));
    co_return res.body();
}

}  // namespace queen::auth
