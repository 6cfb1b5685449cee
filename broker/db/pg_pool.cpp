#include "db/pg_pool.hpp"

#include "db/pg_connection.hpp"

#include <utility>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/core.h>

#include <atomic>
#include <deque>
#include <list>
#include <mutex>

namespace queen::db {

namespace asio = boost::asio;

// Shared state of a pool. Connections are counted in `open` from the moment a coroutine
// decides to open one until the connection is closed; `open` never exceeds options.size.
//
// Waiting: a coroutine that finds no idle connection and no free slot parks a `waiter`
// whose steady_timer (bound to the waiter's own executor) expires at the acquire deadline.
// Whoever frees a connection (or a slot) hands it to the first waiter under the mutex and
// cancels that timer, which resumes the waiter on its own executor. The timer's async_wait
// is started under the same mutex (see park()), so a hand-off can never slip in between
// "decided to wait" and "started waiting". No thread ever blocks.
class pg_pool_state : public std::enable_shared_from_this<pg_pool_state> {
public:
    pg_pool_state(asio::any_io_executor executor, pg_pool_options options)
        : executor_(std::move(executor)), options_(std::move(options)) {
        if (options_.size == 0) options_.size = 1;
    }

    asio::awaitable<pooled_connection> acquire();
    void release(std::unique_ptr<pg_connection> conn);
    void close();
    pg_pool_stats stats();
    void count_statement(bool failed) noexcept {
        (failed ? statements_failed_ : statements_completed_).fetch_add(1, std::memory_order_relaxed);
    }
    void observe_failure(const std::string& sqlstate) {
        if (options_.on_statement_failed) options_.on_statement_failed(sqlstate);
    }

private:
    struct waiter {
        explicit waiter(const asio::any_io_executor& ex) : timer(ex) {}
        asio::steady_timer timer;
        bool signalled = false;               // handed something (or the pool closed)
        std::unique_ptr<pg_connection> conn;  // a connection handed over
        bool slot = false;                    // or the right to open a new one
    };

    asio::awaitable<void> park(std::shared_ptr<waiter> w);
    void signal(const std::shared_ptr<waiter>& w);  // under mu_
    void free_slot();                               // a counted connection went away
    asio::awaitable<pooled_connection> open_new();  // the caller holds a slot
    static asio::awaitable<void> rollback_and_release(std::shared_ptr<pg_pool_state> self,
                                                      std::unique_ptr<pg_connection> conn);

    asio::any_io_executor executor_;
    pg_pool_options options_;

    std::mutex mu_;
    std::deque<std::unique_ptr<pg_connection>> idle_;
    std::list<std::shared_ptr<waiter>> waiters_;
    std::size_t open_ = 0;
    bool closed_ = false;
    std::atomic<std::uint64_t> statements_completed_{0};
    std::atomic<std::uint64_t> statements_failed_{0};
};

pg_pool_stats pg_pool_state::stats() {
    std::lock_guard lock(mu_);
    return pg_pool_stats{options_.size,
                         open_,
                         idle_.size(),
                         waiters_.size(),
                         statements_completed_.load(std::memory_order_relaxed),
                         statements_failed_.load(std::memory_order_relaxed)};
}

namespace {

pg_error pool_closed() {
    return pg_error(pg_error_kind::connection_lost, "08003", "the connection pool is closed");
}

}  // namespace

void pg_pool_state::signal(const std::shared_ptr<waiter>& w) {
    w->signalled = true;
    w->timer.cancel();
}

asio::awaitable<void> pg_pool_state::park(std::shared_ptr<waiter> w) {
    boost::system::error_code ec;  // operation_aborted when signalled: expected
    auto token = asio::redirect_error(asio::use_awaitable, ec);
    // Named, not a temporary: g++ 12 destroys a lambda temporary that appears in a co_await
    // full-expression twice (its captures would be released twice).
    auto initiate = [this, w](auto handler) {
        std::lock_guard lock(mu_);
        if (w->signalled) w->timer.expires_after(std::chrono::steady_clock::duration::zero());
        w->timer.async_wait(std::move(handler));
    };
    co_await asio::async_initiate<decltype(token), void(boost::system::error_code)>(std::move(initiate), token);
}

void pg_pool_state::free_slot() {
    std::lock_guard lock(mu_);
    --open_;
    if (!closed_ && !waiters_.empty()) {
        auto w = std::move(waiters_.front());
        waiters_.pop_front();
        w->slot = true;
        ++open_;
        signal(w);
    }
}

asio::awaitable<pooled_connection> pg_pool_state::open_new() {
    std::unique_ptr<pg_connection> conn;
    try {
        conn = co_await pg_connection::open(executor_, options_.conninfo, options_.acquire_timeout);
        conn->prepare_statements(options_.prepared_statements);
    } catch (...) {
        free_slot();
        throw;
    }
    co_return pooled_connection(shared_from_this(), std::move(conn));
}

asio::awaitable<pooled_connection> pg_pool_state::acquire() {
    auto self = shared_from_this();
    const auto deadline = std::chrono::steady_clock::now() + options_.acquire_timeout;
    auto executor = co_await asio::this_coro::executor;

    std::unique_ptr<pg_connection> conn;
    std::shared_ptr<waiter> w;
    {
        std::lock_guard lock(mu_);
        if (closed_) throw pool_closed();
        if (!idle_.empty()) {
            conn = std::move(idle_.back());
            idle_.pop_back();
        } else if (open_ < options_.size) {
            ++open_;  // a slot for a new connection
        } else {
            w = std::make_shared<waiter>(executor);
            w->timer.expires_at(deadline);
            waiters_.push_back(w);
        }
    }

    if (w) {
        const auto parked_at = std::chrono::steady_clock::now();
        co_await park(w);
        if (options_.on_acquire_waited) options_.on_acquire_waited(std::chrono::steady_clock::now() - parked_at);
        std::lock_guard lock(mu_);
        if (w->conn) {
            conn = std::move(w->conn);
        } else if (w->slot) {
            // handed the right to open a new connection
        } else if (!w->signalled) {
            waiters_.remove(w);
            throw pg_error(pg_error_kind::connection_lost, "08001",
                           fmt::format("timed out after {} ms waiting for a database connection",
                                       options_.acquire_timeout.count()));
        } else {
            throw pool_closed();
        }
    }

    if (conn) {
        if (conn->healthy()) co_return pooled_connection(self, std::move(conn));
        conn.reset();  // stale (e.g. the server restarted): replace it, keeping its slot
    }
    co_return co_await open_new();
}

void pg_pool_state::release(std::unique_ptr<pg_connection> conn) {
    if (!conn) return;
    const bool usable = !conn->broken() && !conn->busy() && PQstatus(conn->native()) == CONNECTION_OK;
    const auto tx = conn->transaction_status();
    if (usable && (tx == PQTRANS_INTRANS || tx == PQTRANS_INERROR)) {
        // Left inside a transaction (an exception between BEGIN and COMMIT): roll it back
        // asynchronously before the connection is reused.
        bool closed;
        {
            std::lock_guard lock(mu_);
            closed = closed_;
        }
        if (!closed) {
            asio::co_spawn(executor_, rollback_and_release(shared_from_this(), std::move(conn)), asio::detached);
            return;
        }
    }

    std::unique_ptr<pg_connection> to_close;
    {
        std::lock_guard lock(mu_);
        if (closed_ || !usable || tx != PQTRANS_IDLE) {
            to_close = std::move(conn);
            --open_;
            if (!closed_ && !waiters_.empty()) {
                auto w = std::move(waiters_.front());
                waiters_.pop_front();
                w->slot = true;
                ++open_;
                signal(w);
            }
        } else if (!waiters_.empty()) {
            auto w = std::move(waiters_.front());
            waiters_.pop_front();
            w->conn = std::move(conn);
            signal(w);
        } else {
            idle_.push_back(std::move(conn));
        }
    }
    // to_close is destroyed (PQfinish) outside the lock.
}

asio::awaitable<void> pg_pool_state::rollback_and_release(std::shared_ptr<pg_pool_state> self,
                                                          std::unique_ptr<pg_connection> conn) {
    try {
        co_await conn->exec("ROLLBACK", std::vector<pg_param>(), result_format::text);
    } catch (...) {
        conn->mark_broken();
    }
    self->release(std::move(conn));
}

void pg_pool_state::close() {
    std::deque<std::unique_ptr<pg_connection>> idle;
    {
        std::lock_guard lock(mu_);
        closed_ = true;
        open_ -= idle_.size();
        idle.swap(idle_);
        for (auto& w : waiters_) signal(w);
        waiters_.clear();
    }
}

// ---------------------------------------------------------------------------------------

pooled_connection::pooled_connection() = default;

pooled_connection::pooled_connection(std::shared_ptr<pg_pool_state> pool, std::unique_ptr<pg_connection> conn)
    : pool_(std::move(pool)), conn_(std::move(conn)) {}

pooled_connection::pooled_connection(pooled_connection&& other) noexcept = default;

pooled_connection& pooled_connection::operator=(pooled_connection&& other) noexcept {
    if (this != &other) {
        if (pool_ && conn_) pool_->release(std::move(conn_));
        pool_ = std::move(other.pool_);
        conn_ = std::move(other.conn_);
    }
    return *this;
}

pooled_connection::~pooled_connection() {
    if (pool_ && conn_) pool_->release(std::move(conn_));
}

namespace {

asio::awaitable<pg_result> no_connection() {
    throw pg_error(pg_error_kind::connection_lost, "08003", "no connection (moved from or released)");
    co_return pg_result();
}

// Holds the state alive for as long as the awaitable exists.
asio::awaitable<pooled_connection> acquire_from(std::shared_ptr<pg_pool_state> pool) {
    co_return co_await pool->acquire();
}

// Awaits a statement and counts it in the pool's statistics.
asio::awaitable<pg_result> counted(std::shared_ptr<pg_pool_state> pool, asio::awaitable<pg_result> statement) {
    try {
        auto result = co_await std::move(statement);
        if (pool) pool->count_statement(false);
        co_return result;
    } catch (const pg_error& e) {
        if (pool) pool->count_statement(e.kind() != pg_error_kind::raised);
        if (pool && e.kind() != pg_error_kind::raised) pool->observe_failure(e.sqlstate());
        throw;
    }
}

asio::awaitable<pg_result> acquire_and_exec(std::shared_ptr<pg_pool_state> pool, std::string sql,
                                            std::vector<pg_param> params, result_format format) {
    auto conn = co_await pool->acquire();
    co_return co_await conn.exec(sql, params, format);
}

}  // namespace

// Not coroutines themselves: the awaitables they return own copies of the statement and the
// parameter list, so a temporary argument (e.g. the default `{}`) cannot dangle even when the
// awaitable is stored and awaited later. A pg_error(connection_lost) marks the connection
// broken (pg_connection::exec does so), and release() then closes it instead of pooling it.
asio::awaitable<pg_result> pooled_connection::exec(std::string_view sql, const std::vector<pg_param>& params,
                                                   result_format format) {
    if (!conn_) return no_connection();
    return counted(pool_, conn_->exec(std::string(sql), params, format));
}

// ---------------------------------------------------------------------------------------

pg_pool::pg_pool(asio::any_io_executor executor, pg_pool_options options)
    : state_(std::make_shared<pg_pool_state>(std::move(executor), std::move(options))) {}

pg_pool::~pg_pool() {
    close();
}

asio::awaitable<pooled_connection> pg_pool::acquire() {
    return acquire_from(state_);
}

asio::awaitable<pg_result> pg_pool::exec(std::string_view sql, const std::vector<pg_param>& params,
                                         result_format format) {
    return acquire_and_exec(state_, std::string(sql), params, format);
}

void pg_pool::close() {
    state_->close();
}

pg_pool_stats pg_pool::stats() const {
    return state_->stats();
}

}  // namespace queen::db
