#include "http/server.hpp"

#include "http/request_errors.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace queen::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::redirect_error;
using asio::use_awaitable;

namespace {

using tls_stream = beast::ssl_stream<beast::tcp_stream>;

// Plain HTTP has nothing to open.
asio::awaitable<bool> open_session(beast::tcp_stream&, const server_options&) {
    co_return true;
}

// Completes the TLS handshake within the read timeout; false when it failed (a client that
// does not speak TLS, an old protocol, or no acceptable client certificate).
asio::awaitable<bool> open_session(tls_stream& stream, const server_options& options) {
    beast::error_code ec;
    beast::get_lowest_layer(stream).expires_after(options.read_timeout);
    co_await stream.async_handshake(asio::ssl::stream_base::server, redirect_error(use_awaitable, ec));
    if (ec) log::debug("TLS handshake failed: {}", ec.message());
    co_return !ec;
}

// Half-closes and closes the TCP connection.
asio::awaitable<void> close_session(beast::tcp_stream& stream, bool, const server_options&) {
    beast::error_code ignored;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    stream.close();
    co_return;
}

// Sends close_notify after a handshake (bounded by the shutdown timeout), then closes.
asio::awaitable<void> close_session(tls_stream& stream, bool opened, const server_options& options) {
    auto& tcp = beast::get_lowest_layer(stream);
    if (opened && tcp.socket().is_open()) {
        beast::error_code ignored;
        tcp.expires_after(options.tls_shutdown_timeout);
        co_await stream.async_shutdown(redirect_error(use_awaitable, ignored));
    }
    tcp.close();
}

// Writes `res` (an error the connection ends with) within the write timeout. The observers
// count it as an answered request of the route "refused" (method "unknown" when the request
// line was not read).
template <class Stream>
asio::awaitable<void> answer_and_close(Stream& stream, response res, const server_options& options,
                                       std::string_view method) {
    if (options.on_request_started) options.on_request_started();
    const auto started = std::chrono::steady_clock::now();
    add_common_headers(res);
    res.keep_alive(false);
    beast::error_code ignored;
    beast::get_lowest_layer(stream).expires_after(options.write_timeout);
    co_await bhttp::async_write(stream, res, redirect_error(use_awaitable, ignored));
    if (options.on_request_finished)
        options.on_request_finished("refused", method.empty() ? std::string_view("unknown") : method,
                                    res.result_int(),
                                    std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

// Reads one request into `parser`, answering "Expect: 100-continue" on the way; a header past
// the limits ends it with bhttp::error::header_limit.
template <class Stream>
asio::awaitable<void> read_request(Stream& stream, beast::flat_buffer& buffer,
                                   bhttp::request_parser<bhttp::string_body>& parser, const server_options& options,
                                   beast::error_code& ec) {
    co_await bhttp::async_read_header(stream, buffer, parser, redirect_error(use_awaitable, ec));
    // Too many fields counts as too large a header (431; serve_requests tells which).
    if (!ec && header_count_violation(parser.get().base(), options.headers)) ec = bhttp::error::header_limit;
    if (ec || parser.is_done()) co_return;
    // A client that asked "Expect: 100-continue" waits for this before it sends the body
    // (curl waits a whole second otherwise). A body over the limit is refused by the parser
    // below, so the client gets the 413 instead of sending it.
    auto expect = parser.get()[bhttp::field::expect];
    if (beast::iequals(expect, "100-continue") &&
        (!parser.content_length() || *parser.content_length() <= options.max_body_bytes)) {
        bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, parser.get().version()};
        co_await bhttp::async_write(stream, cont, redirect_error(use_awaitable, ec));
    }
    if (!ec) co_await bhttp::async_read(stream, buffer, parser, redirect_error(use_awaitable, ec));
}

// Serves requests on an open connection until it closes, fails or times out.
template <class Stream>
asio::awaitable<void> serve_requests(Stream& stream, const router& routes, const server_options& options,
                                     per_client_slots& connections) {
    auto& tcp = beast::get_lowest_layer(stream);
    beast::flat_buffer buffer;
    beast::error_code ec;
    client_presence presence(tcp.socket());
    // Over the limit, the connection's first request is read and answered 429.
    const auto connection_slot = connections.try_take(presence.address());
    bool first = true;
    for (;;) {
        bhttp::request_parser<bhttp::string_body> parser;
        parser.body_limit(options.max_body_bytes);
        apply_header_limits(parser, options.headers);
        tcp.expires_after(first ? options.read_timeout : options.idle_timeout);
        first = false;
        co_await read_request(stream, buffer, parser, options, ec);
        const std::string_view method = parser.get().method_string();  // empty when unread
        if (ec == bhttp::error::end_of_stream || ec == asio::error::eof) break;
        if (ec == bhttp::error::header_limit) {
            const auto too_many = header_count_violation(parser.get().base(), options.headers);
            response res = error(bhttp::status::request_header_fields_too_large,
                                 too_many ? *too_many : header_too_large(options.headers));
            co_await answer_and_close(stream, std::move(res), options, method);
            break;
        }
        if (ec == bhttp::error::body_limit) {
            response res =
                error(bhttp::status::payload_too_large,
                      "request body exceeds the limit of " + std::to_string(options.max_body_bytes) + " bytes");
            co_await answer_and_close(stream, std::move(res), options, method);
            break;
        }
        if (ec) {
            if (ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category()) {
                // A malformed request: answer 400 once, then close.
                response res = error(bhttp::status::bad_request, malformed_request_text(ec));
                co_await answer_and_close(stream, std::move(res), options, method);
            }
            break;
        }
        if (!connection_slot) {
            response res = error(bhttp::status::too_many_requests,
                                 "too many open connections from this address (the limit is " +
                                     std::to_string(connections.limit()) + ")");
            res.set(bhttp::field::retry_after, "1");
            co_await answer_and_close(stream, std::move(res), options, method);
            break;
        }
        request req = parser.release();
        // Handlers may legitimately take long (long-poll); they bound themselves.
        tcp.expires_never();
        const auto started = std::chrono::steady_clock::now();
        if (options.on_request_started) options.on_request_started();
        dispatch_info info;
        response res = co_await routes.dispatch(req, presence, stream.get_executor(), info);
        add_common_headers(res);
        res.keep_alive(req.keep_alive());
        tcp.expires_after(options.write_timeout);
        co_await bhttp::async_write(stream, res, redirect_error(use_awaitable, ec));
        if (options.on_request_finished) {
            const auto spent = std::chrono::steady_clock::now() - started - info.parked;
            options.on_request_finished(info.route, req.method_string(), res.result_int(),
                                        std::chrono::duration<double>(spent).count());
        }
        if (ec) {
            if (info.on_write_failed) info.on_write_failed();
            break;
        }
        if (!res.keep_alive()) break;
    }
}

// One connection (plain or TLS) from open to close. `keep` holds what the stream refers to
// (its TLS context) for as long as the stream lives.
template <class Stream>
asio::awaitable<void> run_session([[maybe_unused]] std::shared_ptr<const void> keep, Stream accepted,
                                  const router& routes, server_options options,
                                  std::shared_ptr<std::atomic<std::size_t>> active, per_client_slots connections) {
    ++*active;
    struct guard {
        std::shared_ptr<std::atomic<std::size_t>> a;
        ~guard() { --*a; }
    } g{active};
    Stream stream(std::move(accepted));  // a local: destroyed before `keep`
    const bool opened = co_await open_session(stream, options);
    if (opened) co_await serve_requests(stream, routes, options, connections);
    co_await close_session(stream, opened, options);
}

// Logs a session that ended with an exception.
void log_session_failure(std::exception_ptr e) {
    if (!e) return;
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        log::error("session failed: {}", ex.what());
    }
}

}  // namespace

server::server(asio::io_context& ioc, const router& routes, server_options options)
    : ioc_(ioc), routes_(routes), options_(std::move(options)), acceptor_(asio::make_strand(ioc)),
      connections_(options_.max_connections_per_client) {
    auto address = asio::ip::make_address(options_.host);
    asio::ip::tcp::endpoint endpoint{address, options_.port};
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen(asio::socket_base::max_listen_connections);
    port_ = acceptor_.local_endpoint().port();
}

void server::start() {
    asio::co_spawn(acceptor_.get_executor(), accept_loop(), asio::detached);
}

void server::stop() {
    asio::post(acceptor_.get_executor(), [this] {
        beast::error_code ignored;
        acceptor_.close(ignored);
    });
}

asio::awaitable<void> server::accept_loop() {
    for (;;) {
        beast::error_code ec;
        auto socket = co_await acceptor_.async_accept(asio::make_strand(ioc_), redirect_error(use_awaitable, ec));
        if (ec) {
            if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
            log::warn("accept failed: {}", ec.message());
            continue;
        }
        socket.set_option(asio::ip::tcp::no_delay(true), ec);
        auto executor = socket.get_executor();
        if (options_.tls) {
            auto context = options_.tls->current();
            tls_stream stream(beast::tcp_stream(std::move(socket)), *context);
            asio::co_spawn(executor, run_session(context, std::move(stream), routes_, options_, active_, connections_),
                           log_session_failure);
        } else {
            asio::co_spawn(executor,
                           run_session(nullptr, beast::tcp_stream(std::move(socket)), routes_, options_, active_,
                                       connections_),
                           log_session_failure);
        }
    }
}

}  // namespace queen::http
