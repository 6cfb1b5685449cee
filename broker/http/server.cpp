#include "http/server.hpp"

#include "http/accept_backoff.hpp"
#include "http/message_framing.hpp"
#include "http/request_errors.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <array>

namespace queen::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::redirect_error;
using asio::use_awaitable;

namespace {

using tls_stream = beast::ssl_stream<beast::tcp_stream>;

// What one read may add to the connection's buffer beyond a header: the most of a request's
// body the broker holds before the request is admitted.
constexpr std::size_t pre_admission_read_bytes = 64 * 1024;

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

// Reads and drops what a client sends after an answer that ends its connection with its body
// unread, for at most linger_time and linger_bytes, so that the client reads the answer before
// the close resets the connection. Only for plain TCP: over TLS, close_session's close_notify
// ends it.
asio::awaitable<void> discard_unread_body(beast::tcp_stream& stream) {
    static constexpr auto linger_time = std::chrono::seconds(1);
    static constexpr std::size_t linger_bytes = 1u << 20;
    beast::error_code ec;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    std::array<char, 16384> sink;
    stream.expires_after(linger_time);
    for (std::size_t dropped = 0; !ec && dropped < linger_bytes;)
        dropped += co_await stream.async_read_some(asio::buffer(sink), redirect_error(use_awaitable, ec));
}
asio::awaitable<void> discard_unread_body(tls_stream&) {
    co_return;
}

// Writes `res` (an answer given before a request was dispatched) within the write timeout,
// and tells the observers it was answered (route "refused" unless admission matched one,
// method "unknown" when the request line was not read). started: on_request_started was
// called for it already. keep_alive: the connection may serve another request; otherwise it
// ends, its unread body discarded.
template <class Stream>
asio::awaitable<bool> answer_early(Stream& stream, response res, const server_options& options, std::string_view route,
                                   std::string_view method, bool started, bool keep_alive) {
    if (!started && options.on_request_started) options.on_request_started();
    const auto begun = std::chrono::steady_clock::now();
    add_common_headers(res);
    res.keep_alive(keep_alive);
    if (options.on_request_finished)
        options.on_request_finished(route, method.empty() ? std::string_view("unknown") : method, res.result_int(),
                                    std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count());
    beast::error_code ec;
    beast::get_lowest_layer(stream).expires_after(options.write_timeout);
    co_await bhttp::async_write(stream, res, redirect_error(use_awaitable, ec));
    if (!ec && !keep_alive) co_await discard_unread_body(stream);
    co_return !ec && keep_alive;
}

// The answer to a request whose reading failed with `ec`, or nullopt when the connection
// just ends (the client closed it, a timeout, a network error).
std::optional<response> reading_failure(const beast::error_code& ec,
                                        const bhttp::request_parser<bhttp::string_body>& parser,
                                        const server_options& options) {
    if (ec == bhttp::error::header_limit) {
        const auto too_many = header_count_violation(parser.get().base(), options.headers);
        return error(bhttp::status::request_header_fields_too_large,
                     too_many ? *too_many : header_too_large(options.headers));
    }
    if (ec == bhttp::error::body_limit)
        return error(bhttp::status::payload_too_large,
                     "request body exceeds the limit of " + std::to_string(options.max_body_bytes) + " bytes");
    // A malformed request: answered 400 once.
    if (ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category())
        return error(bhttp::status::bad_request, malformed_request_text(ec));
    return std::nullopt;
}

// Reads the request line and header fields into `parser`; a header past the limits ends it
// with bhttp::error::header_limit, a Content-Length past the body limit with body_limit.
template <class Stream>
asio::awaitable<void> read_header(Stream& stream, beast::flat_buffer& buffer,
                                  bhttp::request_parser<bhttp::string_body>& parser, const server_options& options,
                                  beast::error_code& ec) {
    co_await bhttp::async_read_header(stream, buffer, parser, redirect_error(use_awaitable, ec));
    // Too many fields counts as too large a header (431; reading_failure tells which).
    if (!ec && header_count_violation(parser.get().base(), options.headers)) ec = bhttp::error::header_limit;
}

// Reads the body of an admitted request, answering "Expect: 100-continue" first (curl waits a
// whole second otherwise). A Content-Length over the limit was refused with the header.
template <class Stream>
asio::awaitable<void> read_body(Stream& stream, beast::flat_buffer& buffer,
                                bhttp::request_parser<bhttp::string_body>& parser, beast::error_code& ec) {
    if (parser.is_done()) co_return;
    if (beast::iequals(parser.get()[bhttp::field::expect], "100-continue")) {
        bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, parser.get().version()};
        co_await bhttp::async_write(stream, cont, redirect_error(use_awaitable, ec));
    }
    if (!ec) co_await bhttp::async_read(stream, buffer, parser, redirect_error(use_awaitable, ec));
}

// Serves requests on an open connection until it closes, fails or times out. Each request is
// framed (http/message_framing.hpp) and admitted (http/router.hpp) from its header before any
// byte of its body is read; until then the connection holds at most the header limit plus one
// read (pre_admission_read_bytes). Only an admitted request to a route that reads a body gets
// "100 Continue" and has its body read.
template <class Stream>
asio::awaitable<void> serve_requests(Stream& stream, const router& routes, const server_options& options,
                                     per_client_slots& connections, std::atomic<std::size_t>& in_flight) {
    auto& tcp = beast::get_lowest_layer(stream);
    beast::flat_buffer buffer(options.headers.max_bytes + pre_admission_read_bytes);
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
        co_await read_header(stream, buffer, parser, options, ec);
        const std::string_view method = parser.get().method_string();  // empty when unread
        if (ec == bhttp::error::end_of_stream || ec == asio::error::eof) break;
        // From here until its answer is written, a request is in flight (a graceful stop waits
        // for it; a connection idle between requests is not waited for).
        ++in_flight;
        struct request_done {
            std::atomic<std::size_t>& n;
            ~request_done() { --n; }
        } done{in_flight};
        if (ec) {
            if (auto res = reading_failure(ec, parser, options))
                co_await answer_early(stream, std::move(*res), options, "refused", method, false, false);
            break;
        }
        if (!connection_slot) {
            response res =
                error(bhttp::status::too_many_requests, "too many open connections from this address (the limit is " +
                                                            std::to_string(connections.limit()) + ")");
            res.set(bhttp::field::retry_after, "1");
            co_await answer_early(stream, std::move(res), options, "refused", method, false, false);
            break;
        }
        if (auto why = framing_refusal(parser.get())) {
            co_await answer_early(stream, error(bhttp::status::bad_request, *why), options, "refused", method, false,
                                  false);
            break;
        }
        if (options.on_request_started) options.on_request_started();
        const auto started = std::chrono::steady_clock::now();
        router::admission admitted = co_await routes.admit(parser.get(), presence, stream.get_executor());
        if (admitted.answer) {
            // A body not read yet is never read: the connection ends after the answer.
            const bool keep_alive = parser.is_done() && parser.get().keep_alive();
            if (co_await answer_early(stream, std::move(*admitted.answer), options, admitted.route_name, method, true,
                                      keep_alive))
                continue;
            break;
        }
        co_await read_body(stream, buffer, parser, ec);
        if (ec) {
            auto res = reading_failure(ec, parser, options);
            if (!res) res = error(bhttp::status::bad_request, "the request body ended before its announced length");
            co_await answer_early(stream, std::move(*res), options, admitted.route_name, method, true, false);
            break;
        }
        request req = parser.release();
        // Handlers may legitimately take long (long-poll); they bound themselves.
        tcp.expires_never();
        dispatch_info info;
        const std::string_view route = admitted.route_name;
        response res = co_await routes.dispatch(req, std::move(admitted), presence, stream.get_executor(), info);
        add_common_headers(res);
        res.keep_alive(req.keep_alive());
        if (options.on_request_finished) {
            const auto spent = std::chrono::steady_clock::now() - started - info.parked;
            options.on_request_finished(route, req.method_string(), res.result_int(),
                                        std::chrono::duration<double>(spent).count());
        }
        tcp.expires_after(options.write_timeout);
        co_await bhttp::async_write(stream, res, redirect_error(use_awaitable, ec));
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
                                  std::shared_ptr<std::atomic<std::size_t>> in_flight, per_client_slots connections) {
    Stream stream(std::move(accepted));  // a local: destroyed before `keep`
    const bool opened = co_await open_session(stream, options);
    if (opened) co_await serve_requests(stream, routes, options, connections, *in_flight);
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
    : ioc_(ioc),
      routes_(routes),
      options_(std::move(options)),
      acceptor_(asio::make_strand(ioc)),
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
    accept_backoff backoff;
    asio::steady_timer pause(acceptor_.get_executor());
    for (;;) {
        beast::error_code ec;
        auto socket = co_await acceptor_.async_accept(asio::make_strand(ioc_), redirect_error(use_awaitable, ec));
        if (ec) {
            if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
            const auto decision = backoff.failed(ec, std::chrono::steady_clock::now());
            if (decision.log_line) log::warn("{}", *decision.log_line);
            if (decision.wait.count() > 0) {
                pause.expires_after(decision.wait);
                co_await pause.async_wait(redirect_error(use_awaitable, ec));
            }
            continue;
        }
        backoff.succeeded();
        socket.set_option(asio::ip::tcp::no_delay(true), ec);
        auto executor = socket.get_executor();
        if (options_.tls) {
            auto context = options_.tls->current();
            tls_stream stream(beast::tcp_stream(std::move(socket)), *context);
            asio::co_spawn(executor,
                           run_session(context, std::move(stream), routes_, options_, in_flight_, connections_),
                           log_session_failure);
        } else {
            asio::co_spawn(
                executor,
                run_session(nullptr, beast::tcp_stream(std::move(socket)), routes_, options_, in_flight_, connections_),
                log_session_failure);
        }
    }
}

}  // namespace queen::http
