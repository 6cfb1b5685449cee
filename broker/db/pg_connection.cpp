#include "db/pg_connection.hpp"

#include <utility>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/core.h>

#include <stdexcept>

namespace queen::db {

namespace asio = boost::asio;
using wait_type = asio::posix::descriptor_base::wait_type;

namespace {

constexpr const char* kConnectionFailure = "08006";       // connection_failure
constexpr const char* kCannotConnect = "08001";           // sqlclient_unable_to_establish_sqlconnection
constexpr const char* kConnectionDoesNotExist = "08003";  // connection_does_not_exist

void ignore_notice(void*, const char*) {}

std::string trimmed(const char* s) {
    std::string out = s ? s : "";
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
}

// Serializes the connect timeout with the connecting coroutine (both on the strand).
struct connect_guard {
    bool done = false;
};

}  // namespace

pg_connection::pg_connection(asio::any_io_executor executor) : socket_(std::move(executor)) {}

pg_connection::~pg_connection() {
    unwatch_socket();  // Asio must never close libpq's socket
    if (conn_) PQfinish(conn_);
}

void pg_connection::unwatch_socket() noexcept {
    if (socket_.is_open()) {
        boost::system::error_code ignored;
        socket_.cancel(ignored);
        (void)socket_.release();
    }
}

void pg_connection::watch_socket() {
    unwatch_socket();
    const int fd = PQsocket(conn_);
    if (fd < 0) fail(kConnectionFailure, "connection has no socket");
    boost::system::error_code ec;
    socket_.assign(fd, ec);
    if (ec) fail(kConnectionFailure, fmt::format("cannot watch the connection's socket: {}", ec.message()));
}

void pg_connection::fail(const char* sqlstate, std::string_view context) {
    broken_ = true;
    busy_ = false;
    std::string detail = conn_ ? trimmed(PQerrorMessage(conn_)) : std::string();
    std::string message(context);
    if (!detail.empty()) message += ": " + detail;
    throw pg_error(pg_error_kind::connection_lost, sqlstate, std::move(message));
}

asio::awaitable<std::unique_ptr<pg_connection>> pg_connection::open(asio::any_io_executor executor,
                                                                    std::string conninfo,
                                                                    std::chrono::milliseconds timeout) {
    asio::any_io_executor strand = asio::make_strand(executor);
    auto conn = std::make_unique<pg_connection>(strand);
    // Run the handshake on the connection's strand so its timeout is serialized with it;
    // the caller resumes on its own executor.
    co_await asio::co_spawn(strand, conn->connect(std::move(conninfo), timeout), asio::use_awaitable);
    co_return conn;
}

asio::awaitable<void> pg_connection::connect(std::string conninfo, std::chrono::milliseconds timeout) {
    if (conn_) throw std::logic_error("pg_connection::connect called twice");
    const char* keys[] = {"dbname", "fallback_application_name", nullptr};
    const char* values[] = {conninfo.c_str(), "queen", nullptr};
    conn_ = PQconnectStartParams(keys, values, /*expand_dbname=*/1);
    if (!conn_) throw pg_error(pg_error_kind::connection_lost, kCannotConnect, "cannot allocate a libpq connection");
    PQsetNoticeProcessor(conn_, &ignore_notice, nullptr);
    if (PQstatus(conn_) == CONNECTION_BAD) fail(kCannotConnect, "cannot connect to PostgreSQL");

    auto guard = std::make_shared<connect_guard>();
    asio::steady_timer timer(socket_.get_executor());
    timer.expires_after(timeout);
    timer.async_wait([this, guard](boost::system::error_code ec) {
        if (ec || guard->done) return;
        timed_out_ = true;
        boost::system::error_code ignored;
        socket_.cancel(ignored);
    });
    struct finish {
        std::shared_ptr<connect_guard> g;
        asio::steady_timer& t;
        ~finish() {
            g->done = true;
            t.cancel();
        }
    } finish_on_exit{guard, timer};

    PostgresPollingStatusType status = PGRES_POLLING_WRITING;
    while (status != PGRES_POLLING_OK) {
        if (status == PGRES_POLLING_FAILED) fail(kCannotConnect, "cannot connect to PostgreSQL");
        // libpq may switch sockets while trying addresses; re-register every round so a
        // reused descriptor number is never left unregistered.
        watch_socket();
        co_await wait(status == PGRES_POLLING_READING ? wait_type::wait_read : wait_type::wait_write);
        status = PQconnectPoll(conn_);
    }
    if (PQsetnonblocking(conn_, 1) != 0) fail(kCannotConnect, "cannot make the connection non-blocking");
    watch_socket();
}

asio::awaitable<void> pg_connection::wait(wait_type what) {
    if (cancelled_) fail(kConnectionFailure, "operation cancelled");
    if (timed_out_) fail(kCannotConnect, "timed out connecting to PostgreSQL");
    boost::system::error_code ec;
    co_await socket_.async_wait(what, asio::redirect_error(asio::use_awaitable, ec));
    if (cancelled_) fail(kConnectionFailure, "operation cancelled");
    if (timed_out_) fail(kCannotConnect, "timed out connecting to PostgreSQL");
    if (ec) fail(kConnectionFailure, fmt::format("socket error: {}", ec.message()));
}

asio::awaitable<void> pg_connection::wait_readable() {
    if (!conn_ || broken_)
        throw pg_error(pg_error_kind::connection_lost, kConnectionDoesNotExist, "connection is closed");
    co_await wait(wait_type::wait_read);
    if (!PQconsumeInput(conn_) || PQstatus(conn_) != CONNECTION_OK)
        fail(kConnectionFailure, "lost the connection to PostgreSQL");
}

void pg_connection::cancel() {
    cancelled_ = true;
    boost::system::error_code ignored;
    if (socket_.is_open()) socket_.cancel(ignored);
}

bool pg_connection::healthy() {
    if (!conn_ || broken_ || busy_) return false;
    if (PQstatus(conn_) != CONNECTION_OK) return (broken_ = true, false);
    // Twice: the first read may return buffered bytes (e.g. a FATAL admin-shutdown
    // message), the second then sees EOF.
    for (int i = 0; i < 2; ++i) {
        if (!PQconsumeInput(conn_)) return (broken_ = true, false);
    }
    (void)PQisBusy(conn_);  // parse what arrived while idle
    while (PGnotify* n = PQnotifies(conn_)) PQfreemem(n);
    if (PQstatus(conn_) != CONNECTION_OK) return (broken_ = true, false);
    return PQtransactionStatus(conn_) == PQTRANS_IDLE;
}

PGTransactionStatusType pg_connection::transaction_status() const noexcept {
    return conn_ ? PQtransactionStatus(conn_) : PQTRANS_UNKNOWN;
}

asio::awaitable<pg_result> pg_connection::exec(std::string sql, std::vector<pg_param> params, result_format format) {
    if (!conn_ || broken_)
        throw pg_error(pg_error_kind::connection_lost, kConnectionDoesNotExist, "connection is closed");
    if (busy_) throw std::logic_error("pg_connection::exec: another statement is in flight");

    const int n = static_cast<int>(params.size());
    std::vector<const char*> values(params.size());
    std::vector<int> lengths(params.size());
    std::vector<int> formats(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
        const auto& p = params[i];
        if (p.value) {
            // A zero-length text value still needs a non-NULL pointer.
            values[i] = p.value->data() ? p.value->data() : "";
            lengths[i] = static_cast<int>(p.value->size());
        }
        formats[i] = p.binary ? 1 : 0;
    }

    // A statement with parameters runs prepared: parsed, analysed and planned once per
    // connection. One the server no longer has, or whose plan can no longer be used (a
    // function it calls was replaced with another result type), is prepared again, once,
    // when the failure ended no transaction block of the caller's.
    for (int attempt = 0; prepare_statements_ && n > 0; ++attempt) {
        const std::optional<std::string> name = co_await prepared_name(sql, n);
        if (!name) break;  // over the cap: an unnamed statement
        busy_ = true;
        if (!PQsendQueryPrepared(conn_, name->c_str(), n, values.data(), lengths.data(), formats.data(),
                                 static_cast<int>(format)))
            send_failed();
        try {
            co_return co_await finish();
        } catch (const pg_error& e) {
            if (attempt > 0 || !stale_prepared(e) || transaction_status() != PQTRANS_IDLE) throw;
        }
        // Forgotten here; an outdated one stays on the server under its old name until the
        // connection closes (a schema change, so rare).
        prepared_.erase(sql);
    }

    busy_ = true;
    if (!PQsendQueryParams(conn_, sql.c_str(), n, nullptr, values.data(), lengths.data(), formats.data(),
                           static_cast<int>(format)))
        send_failed();
    co_return co_await finish();
}

bool pg_connection::stale_prepared(const pg_error& e) {
    // 26000: the statement is gone (DEALLOCATE, DISCARD ALL); 0A000 with this text: a plan
    // cached before a function it calls changed its result type.
    return e.sqlstate() == "26000" ||
           (e.sqlstate() == "0A000" &&
            std::string_view(e.what()).find("cached plan must not change") != std::string_view::npos);
}

void pg_connection::send_failed() {
    if (PQstatus(conn_) != CONNECTION_OK) fail(kConnectionFailure, "cannot send the statement");
    busy_ = false;
    throw pg_error(pg_error_kind::other, "", trimmed(PQerrorMessage(conn_)));
}

asio::awaitable<std::optional<std::string>> pg_connection::prepared_name(const std::string& sql, int params) {
    if (auto it = prepared_.find(sql); it != prepared_.end()) co_return it->second;
    if (prepared_.size() >= max_prepared_statements) co_return std::nullopt;
    std::string name = "queen_" + std::to_string(++prepared_count_);
    busy_ = true;
    if (!PQsendPrepare(conn_, name.c_str(), sql.c_str(), params, nullptr)) send_failed();
    (void)co_await finish();  // a statement that cannot be prepared fails as it would run
    prepared_.emplace(sql, name);
    co_return name;
}

asio::awaitable<pg_result> pg_connection::finish() {
    // Flush: the socket is non-blocking, so large statements may need several rounds.
    for (;;) {
        const int r = PQflush(conn_);
        if (r == 0) break;
        if (r < 0) fail(kConnectionFailure, "cannot send the statement");
        co_await wait(wait_type::wait_write);
        if (!PQconsumeInput(conn_)) fail(kConnectionFailure, "lost the connection to PostgreSQL");
    }

    // Collect exactly one result, then drain until PQgetResult returns NULL.
    pg_result result;
    for (;;) {
        while (PQisBusy(conn_)) {
            co_await wait(wait_type::wait_read);
            if (!PQconsumeInput(conn_)) fail(kConnectionFailure, "lost the connection to PostgreSQL");
        }
        PGresult* r = PQgetResult(conn_);
        if (!r) break;
        const ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_COPY_IN || st == PGRES_COPY_OUT || st == PGRES_COPY_BOTH) {
            PQclear(r);
            fail(kConnectionFailure, "copy results are not supported by pg_connection::exec");
        }
        if (!result.get() || (st == PGRES_FATAL_ERROR && PQresultStatus(result.get()) != PGRES_FATAL_ERROR)) {
            result = pg_result(r);
        } else {
            PQclear(r);
        }
    }
    busy_ = false;

    const bool lost = PQstatus(conn_) != CONNECTION_OK;
    if (lost) broken_ = true;
    if (!result.get()) fail(kConnectionFailure, "no result from PostgreSQL");

    switch (PQresultStatus(result.get())) {
        case PGRES_TUPLES_OK:
        case PGRES_COMMAND_OK:
        case PGRES_EMPTY_QUERY:
        case PGRES_SINGLE_TUPLE:
            co_return result;
        case PGRES_FATAL_ERROR: {
            const char* state = PQresultErrorField(result.get(), PG_DIAG_SQLSTATE);
            const char* primary = PQresultErrorField(result.get(), PG_DIAG_MESSAGE_PRIMARY);
            std::string sqlstate = state ? state : "";
            std::string message = primary ? primary : trimmed(PQresultErrorMessage(result.get()));
            pg_error_kind kind = classify_sqlstate(sqlstate);
            if (sqlstate.empty() && lost) {
                kind = pg_error_kind::connection_lost;
                sqlstate = kConnectionFailure;
            }
            if (kind == pg_error_kind::connection_lost) broken_ = true;
            throw pg_error(kind, std::move(sqlstate), std::move(message));
        }
        default: {
            std::string message = trimmed(PQresultErrorMessage(result.get()));
            if (message.empty())
                message = fmt::format("unexpected result status {}", PQresStatus(PQresultStatus(result.get())));
            if (lost) throw pg_error(pg_error_kind::connection_lost, kConnectionFailure, std::move(message));
            throw pg_error(pg_error_kind::other, "", std::move(message));
        }
    }
}

}  // namespace queen::db
