#pragma once
// Private to broker/db: one libpq connection driven asynchronously by Asio.
//
// The socket is watched through a boost::asio::posix::stream_descriptor that never owns
// it: libpq opened it and PQfinish closes it, so the descriptor is release()d first.
// Only one operation may be in flight at a time (the pool hands a connection to one
// coroutine at a time). connect() and cancel() must run on executor() (a strand), so that
// the connect timeout and cancellation are serialized with the waits.
#include "db/pg_error.hpp"
#include "db/pg_pool.hpp"
#include "db/pg_result.hpp"

#include <utility>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <libpq-fe.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace queen::db {

// Statements a connection keeps prepared at most; past that, statements run unnamed. The
// store's texts are constants, a few dozen in all; the cap bounds a caller that builds them.
inline constexpr std::size_t max_prepared_statements = 256;

class pg_connection {
public:
    // `executor` should be a strand: the socket's and the connect timer's executor.
    explicit pg_connection(boost::asio::any_io_executor executor);
    ~pg_connection();
    pg_connection(const pg_connection&) = delete;
    pg_connection& operator=(const pg_connection&) = delete;

    // Opens a connection on a private strand of `executor`; callable from any coroutine.
    // Throws pg_error(connection_lost) on failure or after `timeout`.
    static boost::asio::awaitable<std::unique_ptr<pg_connection>> open(boost::asio::any_io_executor executor,
                                                                       std::string conninfo,
                                                                       std::chrono::milliseconds timeout);

    // Connects with PQconnectStartParams/PQconnectPoll (fallback_application_name=queen).
    // Must be awaited from a coroutine running on executor().
    boost::asio::awaitable<void> connect(std::string conninfo, std::chrono::milliseconds timeout);

    // Runs one statement and collects its result; throws pg_error. A statement with
    // parameters runs as a statement this connection prepared the first time it met its text
    // (when preparing is on), any other with PQsendQueryParams. Connection failures (and
    // SQLSTATEs classified connection_lost) mark it broken. Takes its arguments by value so
    // that the returned awaitable owns them (the bytes the pg_param views point to must stay
    // alive until it completes).
    boost::asio::awaitable<pg_result> exec(std::string sql, std::vector<pg_param> params, result_format format);

    // Whether statements with parameters are prepared (on by default; off behind a pooler
    // that does not keep a server connection per client connection).
    void prepare_statements(bool on) noexcept { prepare_statements_ = on; }

    // Waits until the socket is readable, then PQconsumeInput; throws pg_error(connection_lost)
    // when the connection failed or was cancelled. Used by the listener.
    boost::asio::awaitable<void> wait_readable();

    // Cancels a pending wait; later waits fail too. Call on executor().
    void cancel();

    // Non-blocking check of an idle connection: reads what the server may have sent (an
    // administrator shutdown message, EOF) and reports whether the connection is usable.
    bool healthy();

    bool broken() const noexcept { return broken_; }
    void mark_broken() noexcept { broken_ = true; }
    bool busy() const noexcept { return busy_; }  // a statement is in flight
    PGTransactionStatusType transaction_status() const noexcept;
    PGconn* native() const noexcept { return conn_; }
    boost::asio::any_io_executor executor() { return socket_.get_executor(); }

private:
    boost::asio::awaitable<void> wait(boost::asio::posix::descriptor_base::wait_type what);
    [[noreturn]] void fail(const char* sqlstate, std::string_view context);
    void watch_socket();  // (re)wraps PQsocket() in socket_
    void unwatch_socket() noexcept;
    // Flushes the statement sent, collects its one result, turns an error into pg_error.
    boost::asio::awaitable<pg_result> finish();
    // The name of sql prepared on this connection, preparing it first when new; nullopt past
    // max_prepared_statements. Throws what preparing raised.
    boost::asio::awaitable<std::optional<std::string>> prepared_name(const std::string& sql, int params);
    [[noreturn]] void send_failed();
    // Whether a prepared statement failed only because the server lost or outdated it.
    static bool stale_prepared(const pg_error& e);

    PGconn* conn_ = nullptr;
    boost::asio::posix::stream_descriptor socket_;
    bool broken_ = false;
    bool busy_ = false;
    bool cancelled_ = false;
    bool timed_out_ = false;
    bool prepare_statements_ = true;
    std::unordered_map<std::string, std::string> prepared_;  // statement text → its name here
    std::size_t prepared_count_ = 0;
};

}  // namespace queen::db
