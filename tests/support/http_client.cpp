#include "http_client.hpp"

#include <utility>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <cctype>

namespace queen::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;

struct http_client::impl {
    std::string host;
    unsigned short port;
    asio::io_context ioc;
    std::optional<beast::tcp_stream> stream;
    beast::flat_buffer buffer;

    void connect() {
        stream.emplace(ioc);
        asio::ip::tcp::resolver resolver(ioc);
        stream->connect(resolver.resolve(host, std::to_string(port)));
        stream->socket().set_option(asio::ip::tcp::no_delay(true));
        buffer.clear();
    }
};

http_client::http_client(std::string host, unsigned short port) : impl_(std::make_unique<impl>()) {
    impl_->host = std::move(host);
    impl_->port = port;
    impl_->connect();
}

http_client::~http_client() {
    if (impl_) close();
}

http_client::http_client(http_client&&) noexcept = default;

void http_client::close() {
    if (impl_->stream) {
        beast::error_code ec;
        impl_->stream->socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
        impl_->stream->close();
        impl_->stream.reset();
    }
}

http_reply http_client::request(const std::string& method, const std::string& target, const std::string& body,
                                const std::map<std::string, std::string>& headers) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (!impl_->stream) impl_->connect();
        bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
        req.set(bhttp::field::host, impl_->host);
        req.keep_alive(true);
        for (const auto& [k, v] : headers) req.set(k, v);
        if (!body.empty() || method == "POST") {
            req.set(bhttp::field::content_type, "application/json");
            req.body() = body;
            req.prepare_payload();
        }
        beast::error_code ec;
        bhttp::write(*impl_->stream, req, ec);
        if (ec && attempt == 0) {
            close();
            continue;
        }
        if (ec) throw beast::system_error(ec);
        bhttp::response_parser<bhttp::string_body> parser;
        parser.body_limit(1ULL << 31);
        if (method == "HEAD") parser.skip(true);
        bhttp::read(*impl_->stream, impl_->buffer, parser, ec);
        if ((ec == bhttp::error::end_of_stream || ec == asio::error::connection_reset) && attempt == 0) {
            close();
            continue;  // a kept-alive connection the server had closed
        }
        if (ec) throw beast::system_error(ec);
        auto res = parser.release();
        http_reply out;
        out.status = static_cast<int>(res.result_int());
        for (const auto& f : res) {
            std::string name(f.name_string());
            std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
            out.headers[name] = std::string(f.value());
        }
        out.body = std::move(res.body());
        if (!res.keep_alive()) close();
        return out;
    }
    throw std::runtime_error("unreachable");
}

http_reply http_client::get(const std::string& target) { return request("GET", target, ""); }
http_reply http_client::post(const std::string& target, const std::string& body) { return request("POST", target, body); }
http_reply http_client::del(const std::string& target) { return request("DELETE", target, ""); }

std::string http_client::raw(const std::string& bytes) {
    close();
    impl_->connect();
    asio::write(impl_->stream->socket(), asio::buffer(bytes));
    std::string out;
    beast::error_code ec;
    char buf[4096];
    impl_->stream->socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    for (;;) {
        std::size_t n = impl_->stream->socket().read_some(asio::buffer(buf), ec);
        if (ec) break;
        out.append(buf, n);
    }
    close();
    return out;
}

std::string url_encode(const std::string& s) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

}  // namespace queen::test
