#include "http/server.hpp"

#include "http/responses.hpp"
#include "log/log.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace queen::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::redirect_error;
using asio::use_awaitable;

namespace {

// Answers `status` with {"error": message} and Connection: close (the session ends after it).
asio::awaitable<void> refuse(beast::tcp_stream& stream, bhttp::status status, std::string message,
                             const server_options& options, int retry_after_seconds = 0) {
    response res = error(status, message);
    add_common_headers(res);
    if (retry_after_seconds > 0) res.set(bhttp::field::retry_after, std::to_string(retry_after_seconds));
    res.keep_alive(false);
    stream.expires_after(options.write_timeout);
    beast::error_code ec;
    co_await bhttp::async_write(stream, res, redirect_error(use_awaitable, ec));
}

// Serves requests on one connection until it closes, fails or times out.
asio::awaitable<void> run_session(beast::tcp_stream stream, const router& routes, server_options options,
                                  std::shared_ptr<std::atomic<std::size_t>> active, per_client_slots connections) {
    ++*active;
    struct guard {
        std::shared_ptr<std::atomic<std::size_t>> a;
        ~guard() { --*a; }
    } g{active};
    beast::flat_buffer buffer;
    beast::error_code ec;
    client_presence presence(stream.socket());
    // Over the limit, the connection's first request is read and answered 429.
    const auto connection_slot = connections.try_take(presence.address());
    bool first = true;
    for (;;) {
        bhttp::request_parser<bhttp::string_body> parser;
        parser.body_limit(options.max_body_bytes);
        apply_header_limits(parser, options.headers);
        stream.expires_after(first ? options.read_timeout : options.idle_timeout);
        first = false;
        co_await bhttp::async_read_header(stream, buffer, parser, redirect_error(use_awaitable, ec));
        if (ec == bhttp::error::header_limit) {
            const std::string message = header_too_large(options.headers);
            co_await refuse(stream, bhttp::status::request_header_fields_too_large, message, options);
            break;
        }
        if (!ec) {
            if (auto too_many = header_count_violation(parser.get().base(), options.headers)) {
                co_await refuse(stream, bhttp::status::request_header_fields_too_large, *too_many, options);
                break;
            }
        }
        if (!ec && !parser.is_done()) {
            // A client that asked "Expect: 100-continue" waits for this before it sends the
            // body (curl waits a whole second otherwise). A body over the limit is refused
            // by the parser below, so the client gets the 413 instead of sending it.
            auto expect = parser.get()[bhttp::field::expect];
            if (beast::iequals(expect, "100-continue") &&
                (!parser.content_length() || *parser.content_length() <= options.max_body_bytes)) {
                bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, parser.get().version()};
                co_await bhttp::async_write(stream, cont, redirect_error(use_awaitable, ec));
            }
            if (!ec) co_await bhttp::async_read(stream, buffer, parser, redirect_error(use_awaitable, ec));
        }
        if (ec == bhttp::error::end_of_stream || ec == asio::error::eof) break;
        if (ec == bhttp::error::body_limit) {
            const std::string message =
                "request body exceeds the limit of " + std::to_string(options.max_body_bytes) + " bytes";
            co_await refuse(stream, bhttp::status::payload_too_large, message, options);
            break;
        }
        if (ec) {
            // A malformed request: answer 400 once, then close.
            if (ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category()) {
                const std::string message = "malformed HTTP request: " + ec.message();
                co_await refuse(stream, bhttp::status::bad_request, message, options);
            }
            break;
        }
        if (!connection_slot) {
            const std::string message = "too many open connections from this address (the limit is " +
                                        std::to_string(connections.limit()) + ")";
            co_await refuse(stream, bhttp::status::too_many_requests, message, options, 1);
            break;
        }
        request req = parser.release();
        // Handlers may legitimately take long (long-poll); they bound themselves.
        stream.expires_never();
        const auto started = std::chrono::steady_clock::now();
        if (options.on_request_started) options.on_request_started();
        dispatch_info info;
        response res = co_await routes.dispatch(req, presence, stream.get_executor(), info);
        add_common_headers(res);
        res.keep_alive(req.keep_alive());
        stream.expires_after(options.write_timeout);
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
    beast::error_code ignored;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    stream.close();
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
        asio::co_spawn(executor, run_session(beast::tcp_stream(std::move(socket)), routes_, options_, active_, connections_),
                       [](std::exception_ptr e) {
                           if (!e) return;
                           try {
                               std::rethrow_exception(e);
                           } catch (const std::exception& ex) {
                               log::error("session failed: {}", ex.what());
                           }
                       });
    }
}

}  // namespace queen::http
