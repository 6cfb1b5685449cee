#pragma once
// Asynchronous libpq connection pool: no thread ever blocks on a query. Each connection's
// socket is watched by Asio; statements with parameters are prepared once per connection and
// sent with PQsendQueryPrepared (or, with prepared_statements off, PQsendQueryParams), and
// results collected as the socket becomes readable.
#include "db/pg_error.hpp"
#include "db/pg_result.hpp"

#include <utility>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace queen::db {

// One query parameter: NULL, text, or binary bytes (sent with format 1).
struct pg_param {
    std::optional<std::string_view> value;
    bool binary = false;
    static pg_param null() { return {}; }
    static pg_param text(std::string_view v) { return {v, false}; }
    static pg_param bytes(std::string_view v) { return {v, true}; }
};

enum class result_format { text = 0, binary = 1 };

class pg_connection;

// A connection borrowed from the pool; returned to it on destruction.
class pooled_connection {
public:
    pooled_connection();  // empty; defined out of line because pg_connection is incomplete here
    pooled_connection(std::shared_ptr<class pg_pool_state> pool, std::unique_ptr<pg_connection> conn);
    pooled_connection(pooled_connection&&) noexcept;
    pooled_connection& operator=(pooled_connection&&) noexcept;
    ~pooled_connection();

    // Runs one statement (params $1..$n) and returns its single result; throws pg_error.
    // A connection that failed is discarded, not returned to the pool.
    boost::asio::awaitable<pg_result> exec(std::string_view sql, const std::vector<pg_param>& params = {},
                                           result_format format = result_format::text);

private:
    std::shared_ptr<class pg_pool_state> pool_;
    std::unique_ptr<pg_connection> conn_;
};

struct pg_pool_options {
    std::string conninfo;                              // libpq connection string
    std::size_t size = 4;                              // maximum open connections
    std::chrono::milliseconds acquire_timeout{10000};  // then pg_error(connection_lost)
    // Statements with parameters run prepared, once per connection (pg_connection::exec).
    bool prepared_statements = true;
    // Optional observers (metrics): how long an acquirer that found no free connection waited,
    // and the SQLSTATE of each failed statement (errors our procedures raise excluded).
    std::function<void(std::chrono::steady_clock::duration)> on_acquire_waited;
    std::function<void(const std::string& sqlstate)> on_statement_failed;
};

// A point-in-time view of a pool, and its statement counters since it was made.
struct pg_pool_stats {
    std::size_t size = 0;  // maximum open connections
    std::size_t open = 0;  // open or being opened
    std::size_t idle = 0;
    std::size_t waiting = 0;  // acquirers waiting for a connection
    std::uint64_t statements_completed = 0;
    std::uint64_t statements_failed = 0;  // errors other than those our procedures raise (class QN)
};

class pg_pool {
public:
    pg_pool(boost::asio::any_io_executor executor, pg_pool_options options);
    ~pg_pool();

    // Waits (asynchronously) for a free connection, opening one (asynchronously, with
    // PQconnectStart/PQconnectPoll) when fewer than size are open. Broken connections are
    // replaced, so the pool recovers after a database restart.
    boost::asio::awaitable<pooled_connection> acquire();

    // Convenience: acquire, exec, release.
    boost::asio::awaitable<pg_result> exec(std::string_view sql, const std::vector<pg_param>& params = {},
                                           result_format format = result_format::text);

    // Closes idle connections and fails waiters; used at shutdown.
    void close();

    pg_pool_stats stats() const;

private:
    std::shared_ptr<class pg_pool_state> state_;
};

}  // namespace queen::db
