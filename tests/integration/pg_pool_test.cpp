// Integration tests of the asynchronous PostgreSQL layer (pool, listener) and the embedded
// server, against throwaway clusters (test_cluster).
#include "test_cluster.hpp"
#include "test_env.hpp"

// g++ 12 reports a false -Wmismatched-new-delete in some coroutine ramps (Asio's frame
// operator new/delete pair through its recycling allocator).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

#include "db/pg_listener.hpp"
#include "db/pg_pool.hpp"
#include "embedded/embedded_postgres.hpp"

#include <utility>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using queen::db::pg_error;
using queen::test::temp_dir;
using queen::db::pg_error_kind;
using queen::db::pg_listener;
using queen::db::pg_listener_handlers;
using queen::db::pg_param;
using queen::db::pg_pool;
using queen::db::pg_pool_options;
using queen::db::pooled_connection;
using queen::db::result_format;
using queen::test::test_cluster;
using db_result = queen::db::pg_result;  // libpq has a global `struct pg_result`

namespace {

// An io_context run by `threads` threads for the duration of a test.
class runner {
public:
    explicit runner(int threads = 2) : guard_(ioc_.get_executor()) {
        for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { ioc_.run(); });
    }
    ~runner() {
        guard_.reset();
        ioc_.stop();
        for (auto& t : threads_) t.join();
    }
    asio::io_context& ioc() { return ioc_; }
    asio::any_io_executor executor() { return ioc_.get_executor(); }

    // Runs a coroutine to completion (rethrowing its exception); fails after `timeout`.
    template <typename T>
    T run(asio::awaitable<T> aw, std::chrono::seconds timeout = 60s) {
        auto fut = asio::co_spawn(ioc_, std::move(aw), asio::use_future);
        if (fut.wait_for(timeout) != std::future_status::ready) throw std::runtime_error("coroutine timed out");
        return fut.get();
    }

private:
    asio::io_context ioc_;
    asio::executor_work_guard<asio::io_context::executor_type> guard_;
    std::vector<std::thread> threads_;
};

bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds timeout = 15000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!cond()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(10ms);
    }
    return true;
}

// One cluster shared by the tests that do not restart it.
test_cluster& shared_cluster() {
    static test_cluster cluster;
    return cluster;
}

pg_pool_options options_for(const test_cluster& c, std::size_t size) {
    pg_pool_options o;
    o.conninfo = c.conninfo();
    o.size = size;
    return o;
}

}  // namespace

TEST(PgPool, ManyConcurrentQueriesOnTwoConnections) {
    auto& cluster = shared_cluster();
    runner r(2);
    pg_pool pool(r.executor(), options_for(cluster, 2));

    constexpr int kCoroutines = 50;
    constexpr int kQueriesEach = 20;
    std::atomic<int> completed{0};
    std::atomic<int> wrong{0};
    std::vector<std::future<void>> done;
    for (int c = 0; c < kCoroutines; ++c) {
        done.push_back(asio::co_spawn(
            r.ioc(),
            [&, c]() -> asio::awaitable<void> {
                for (int q = 0; q < kQueriesEach; ++q) {
                    const std::string v = std::to_string(c * 1000 + q);
                    // (g++ 12 rejects a braced list inside a co_await expression: name it.)
                    const std::vector<pg_param> params{pg_param::text(v)};
                    auto res = co_await pool.exec("SELECT $1::int8 * 2, current_setting('application_name')",
                                                  params);
                    if (res.int64(0, 0) != (c * 1000 + q) * 2 || res.text(0, 1) != "queen") ++wrong;
                    ++completed;
                }
            },
            asio::use_future));
    }
    for (auto& f : done) {
        ASSERT_EQ(f.wait_for(60s), std::future_status::ready);
        f.get();
    }
    EXPECT_EQ(completed.load(), kCoroutines * kQueriesEach);
    EXPECT_EQ(wrong.load(), 0);
    // The pool never opened more than its size.
    EXPECT_EQ(cluster.run_sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'queen'"), "2");
}

TEST(PgPool, SlowQueriesDoNotBlockThreads) {
    auto& cluster = shared_cluster();
    runner r(2);
    pg_pool pool(r.executor(), options_for(cluster, 2));
    r.run(pool.exec("SELECT 1"));  // warm up one connection

    // Two pg_sleep(1) queries occupy both connections while a ticker fires every 10 ms for
    // 150 ms. If a query blocked an io_context thread, both threads would be stuck and the
    // ticker could not finish before the queries do. The margins are wide on purpose: the
    // suite runs sharded on a busy machine, and what is checked is order, not speed.
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::future<std::chrono::steady_clock::time_point>> sleeps;
    for (int i = 0; i < 2; ++i) {
        sleeps.push_back(asio::co_spawn(
            r.ioc(),
            [&]() -> asio::awaitable<std::chrono::steady_clock::time_point> {
                co_await pool.exec("SELECT pg_sleep(1)");
                co_return std::chrono::steady_clock::now();
            },
            asio::use_future));
    }
    auto ticker = asio::co_spawn(
        r.ioc(),
        [&]() -> asio::awaitable<int> {
            asio::steady_timer timer(co_await asio::this_coro::executor);
            int ticks = 0;
            const auto until = std::chrono::steady_clock::now() + 150ms;
            while (std::chrono::steady_clock::now() < until) {
                timer.expires_after(10ms);
                co_await timer.async_wait(asio::use_awaitable);
                ++ticks;
            }
            co_return ticks;
        },
        asio::use_future);
    const int ticks = ticker.get();
    const auto ticker_done = std::chrono::steady_clock::now();
    EXPECT_GT(ticks, 0);
    // Both sleeps are seen running at once: they run concurrently, not one after the other.
    int most_at_once = 0;
    while (most_at_once < 2 && sleeps.back().wait_for(0s) != std::future_status::ready) {
        most_at_once = std::max(most_at_once, std::stoi(cluster.run_sql(
                                                   "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                                                   "AND query = 'SELECT pg_sleep(1)'")));
        std::this_thread::sleep_for(50ms);
    }
    EXPECT_EQ(most_at_once, 2) << "the two sleeps should run concurrently";
    for (auto& s : sleeps) {
        auto finished = s.get();
        EXPECT_GT(finished, ticker_done) << "the ticker should finish while the queries still sleep";
        EXPECT_GE(finished - start, 995ms);
    }
}

namespace {

asio::awaitable<void> expect_error(pooled_connection& conn, std::string sql, pg_error_kind kind, std::string state) {
    try {
        co_await conn.exec(sql);
        ADD_FAILURE() << "no error from " << sql;
    } catch (const pg_error& e) {
        EXPECT_EQ(e.kind(), kind) << sql;
        EXPECT_EQ(e.sqlstate(), state) << sql;
        EXPECT_FALSE(std::string(e.what()).empty());
    }
}

asio::awaitable<void> sql_errors(pg_pool& pool) {
    auto conn = co_await pool.acquire();
    co_await expect_error(conn, "SELECT 1/0", pg_error_kind::other, "22012");
    co_await expect_error(conn, "SELECT * FROM no_such_table", pg_error_kind::other, "42P01");
    co_await conn.exec("CREATE TEMP TABLE u (id int PRIMARY KEY)");
    co_await conn.exec("INSERT INTO u VALUES (1)");
    co_await expect_error(conn, "INSERT INTO u VALUES (1)", pg_error_kind::unique_violation, "23505");
    const std::string raise = "DO $$ BEGIN RAISE EXCEPTION 'queue missing' USING ERRCODE = 'QN001'; END $$";
    co_await expect_error(conn, raise, pg_error_kind::raised, "QN001");
    std::string message;
    try {
        co_await conn.exec(raise);
    } catch (const pg_error& e) {
        message = e.what();
    }
    EXPECT_EQ(message, "queue missing");  // the primary message
    // Still usable, including command results and transactions.
    auto one = co_await conn.exec("SELECT 41 + 1");
    EXPECT_EQ(one.int64(0, 0), 42);
    auto begin = co_await conn.exec("BEGIN");
    EXPECT_EQ(PQresultStatus(begin.get()), PGRES_COMMAND_OK);
    co_await conn.exec("INSERT INTO u VALUES (2)");
    co_await expect_error(conn, "INSERT INTO u VALUES (2)", pg_error_kind::unique_violation, "23505");
    co_await expect_error(conn, "SELECT 1", pg_error_kind::other, "25P02");  // aborted transaction
    co_await conn.exec("ROLLBACK");
    auto count = co_await conn.exec("SELECT count(*) FROM u");
    EXPECT_EQ(count.int64(0, 0), 1);
    auto empty = co_await conn.exec("");
    EXPECT_EQ(empty.rows(), 0);
}

}  // namespace

TEST(PgPool, SqlErrorsBecomePgErrorAndConnectionStaysUsable) {
    auto& cluster = shared_cluster();
    runner r(2);
    pg_pool pool(r.executor(), options_for(cluster, 1));
    r.run(sql_errors(pool));
    // The same (single) connection is still good through the pool.
    EXPECT_EQ(r.run(pool.exec("SELECT 7")).int64(0, 0), 7);
}

TEST(PgPool, BinaryResultsRoundTrip) {
    auto& cluster = shared_cluster();
    runner r(2);
    pg_pool pool(r.executor(), options_for(cluster, 2));
    std::string blob;
    for (int i = 0; i < 256; ++i) blob.push_back(static_cast<char>(i));
    blob += std::string(100000, '\0');  // large enough to need several socket reads
    auto res = r.run(pool.exec("SELECT $1::bytea, length($1::bytea)::int4, (-7)::int2, 123456789012::int8, true, "
                               "NULL::int8, $2::text",
                               {pg_param::bytes(blob), pg_param::text("häßlich")}, result_format::binary));
    ASSERT_EQ(res.rows(), 1);
    ASSERT_TRUE(res.binary(0));
    auto bytes = res.bytes(0, 0);
    ASSERT_EQ(bytes.size(), blob.size());
    EXPECT_EQ(std::memcmp(bytes.data(), blob.data(), blob.size()), 0);
    EXPECT_EQ(res.int64(0, 1), static_cast<std::int64_t>(blob.size()));
    EXPECT_EQ(res.int64(0, 2), -7);
    EXPECT_EQ(res.int64(0, 3), 123456789012LL);
    EXPECT_TRUE(res.boolean(0, 4));
    EXPECT_TRUE(res.is_null(0, 5));
    EXPECT_EQ(res.text(0, 6), "häßlich");

    // NULL and empty parameters; text results.
    auto t = r.run(pool.exec("SELECT $1::text IS NULL, $2::text = '', $3::bytea = ''::bytea",
                             {pg_param::null(), pg_param::text(""), pg_param::bytes("")}));
    EXPECT_TRUE(t.boolean(0, 0));
    EXPECT_TRUE(t.boolean(0, 1));
    EXPECT_TRUE(t.boolean(0, 2));
}

TEST(PgPool, AcquireTimesOutWhenExhausted) {
    auto& cluster = shared_cluster();
    runner r(2);
    auto opts = options_for(cluster, 1);
    opts.acquire_timeout = 300ms;
    pg_pool pool(r.executor(), opts);
    r.run([&]() -> asio::awaitable<void> {
        auto held = co_await pool.acquire();
        const auto start = std::chrono::steady_clock::now();
        try {
            auto second = co_await pool.acquire();
            ADD_FAILURE() << "acquire should time out";
        } catch (const pg_error& e) {
            EXPECT_EQ(e.kind(), pg_error_kind::connection_lost);
            EXPECT_GE(std::chrono::steady_clock::now() - start, 290ms);
        }
    }());
    // The held connection went back; the pool works.
    EXPECT_EQ(r.run(pool.exec("SELECT 1")).int64(0, 0), 1);
}

TEST(PgPool, ConnectionLeftInTransactionIsRolledBack) {
    auto& cluster = shared_cluster();
    cluster.run_sql("CREATE TABLE IF NOT EXISTS rollback_check (x int)");
    runner r(2);
    pg_pool pool(r.executor(), options_for(cluster, 1));
    r.run([&]() -> asio::awaitable<void> {
        {
            auto conn = co_await pool.acquire();
            co_await conn.exec("BEGIN");
            co_await conn.exec("INSERT INTO rollback_check VALUES (1)");
        }  // released mid-transaction
        auto conn = co_await pool.acquire();
        auto res = co_await conn.exec("SELECT count(*) FROM rollback_check");
        EXPECT_EQ(res.int64(0, 0), 0);
    }());
    EXPECT_EQ(cluster.run_sql("SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'"), "0");
}

TEST(PgPool, RecoversAfterPostgresRestart) {
    test_cluster cluster;
    runner r(2);
    auto opts = options_for(cluster, 2);
    opts.acquire_timeout = 3000ms;
    pg_pool pool(r.executor(), opts);
    EXPECT_EQ(r.run(pool.exec("SELECT 1")).int64(0, 0), 1);

    // A connection borrowed across the outage fails with connection_lost and is discarded.
    auto borrowed = r.run(pool.acquire());
    cluster.stop();
    auto expect_lost = [&](std::function<asio::awaitable<db_result>()> f) {
        try {
            r.run(f());
            ADD_FAILURE() << "query succeeded during the outage";
        } catch (const pg_error& e) {
            EXPECT_EQ(e.kind(), pg_error_kind::connection_lost) << e.what();
            EXPECT_TRUE(e.retryable());
        }
    };
    expect_lost([&] { return borrowed.exec("SELECT 1"); });
    { auto drop = std::move(borrowed); }
    for (int i = 0; i < 3; ++i) expect_lost([&] { return pool.exec("SELECT 1"); });

    cluster.start();
    EXPECT_EQ(r.run(pool.exec("SELECT 2")).int64(0, 0), 2);
    // Both slots work again (the failed ones were released).
    r.run([&]() -> asio::awaitable<void> {
        auto a = co_await pool.acquire();
        auto b = co_await pool.acquire();
        EXPECT_EQ((co_await a.exec("SELECT 3")).int64(0, 0), 3);
        EXPECT_EQ((co_await b.exec("SELECT 4")).int64(0, 0), 4);
    }());
}

TEST(PgPool, CloseFailsWaitersAndLaterAcquires) {
    auto& cluster = shared_cluster();
    runner r(2);
    pg_pool pool(r.executor(), options_for(cluster, 1));
    auto held = r.run(pool.acquire());
    auto waiter = asio::co_spawn(
        r.ioc(), [&]() -> asio::awaitable<void> { co_await pool.acquire(); }, asio::use_future);
    std::this_thread::sleep_for(50ms);
    pool.close();
    ASSERT_EQ(waiter.wait_for(5s), std::future_status::ready);
    EXPECT_THROW(waiter.get(), pg_error);
    EXPECT_THROW(r.run(pool.exec("SELECT 1")), pg_error);
}

// ---------------------------------------------------------------------------------------

TEST(Listener, ReceivesNotificationsAndReconnectsAfterRestart) {
    test_cluster cluster;
    runner r(2);
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::pair<std::string, std::string>> received;
    std::atomic<int> connected{0};
    pg_listener_handlers handlers;
    handlers.on_notify = [&](const std::string& channel, const std::string& payload) {
        std::lock_guard lock(mu);
        received.emplace_back(channel, payload);
        cv.notify_all();
    };
    handlers.on_connected = [&] { ++connected; };
    pg_listener listener(r.executor(), cluster.conninfo(), {"queen_events", "Mixed \"Case\""}, handlers);
    listener.start();
    ASSERT_TRUE(wait_until([&] { return connected == 1; }));

    auto wait_for = [&](std::size_t n) {
        std::unique_lock lock(mu);
        return cv.wait_for(lock, 10s, [&] { return received.size() >= n; });
    };
    cluster.run_sql("NOTIFY queen_events, 'hello'");
    cluster.run_sql("SELECT pg_notify('Mixed \"Case\"', 'quoted')");
    ASSERT_TRUE(wait_for(2));
    {
        std::lock_guard lock(mu);
        EXPECT_EQ(received[0], std::make_pair(std::string("queen_events"), std::string("hello")));
        EXPECT_EQ(received[1], std::make_pair(std::string("Mixed \"Case\""), std::string("quoted")));
    }

    cluster.stop();
    std::this_thread::sleep_for(300ms);  // a few failed reconnection attempts
    EXPECT_EQ(connected.load(), 1);
    cluster.start();
    ASSERT_TRUE(wait_until([&] { return connected == 2; })) << "listener did not reconnect";
    cluster.run_sql("NOTIFY queen_events, 'again'");
    ASSERT_TRUE(wait_for(3));
    {
        std::lock_guard lock(mu);
        EXPECT_EQ(received[2].second, "again");
    }

    listener.stop();
    // Its connection closes: no backend listens any more.
    EXPECT_TRUE(wait_until([&] {
        return cluster.run_sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'queen'") == "0";
    }));
    EXPECT_EQ(connected.load(), 2);
}

TEST(Listener, StopWhileServerIsDown) {
    test_cluster cluster;
    cluster.stop();
    runner r(1);
    std::atomic<int> connected{0};
    auto listener = std::make_unique<pg_listener>(r.executor(), cluster.conninfo(), std::vector<std::string>{"x"},
                                                  pg_listener_handlers{nullptr, [&] { ++connected; }});
    listener->start();
    std::this_thread::sleep_for(400ms);
    listener->stop();
    listener.reset();
    EXPECT_EQ(connected.load(), 0);
}

// ---------------------------------------------------------------------------------------

namespace {

long postmaster_pid(const fs::path& data_dir) {
    std::ifstream in(data_dir / "postmaster.pid");
    long pid = 0;
    in >> pid;
    return pid;
}

// Alive and not a zombie (the reaper of an orphaned postmaster may be slow).
bool process_alive(long pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    if (!in) return false;
    std::string line;
    std::getline(in, line);
    auto pos = line.rfind(')');
    return pos != std::string::npos && pos + 2 < line.size() && line[pos + 2] != 'Z';
}

std::string query(const std::string& conninfo, const std::string& sql) {
    PGconn* c = PQconnectdb(conninfo.c_str());
    std::unique_ptr<PGconn, decltype(&PQfinish)> guard(c, &PQfinish);
    if (PQstatus(c) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(c));
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(c, sql.c_str()), &PQclear);
    auto st = PQresultStatus(r.get());
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) throw std::runtime_error(PQerrorMessage(c));
    return st == PGRES_TUPLES_OK && PQntuples(r.get()) > 0 ? PQgetvalue(r.get(), 0, 0) : "";
}

}  // namespace

TEST(Embedded, StartsQueriesStopsAndRestartsOnSameData) {
    temp_dir tmp("emb", true);
    const fs::path data = tmp.path / "pgdata";
    long pid = 0;
    {
        queen::embedded::embedded_postgres pg({data, "", "queen"});
        EXPECT_FALSE(pg.adopted());
        EXPECT_LT(pg.socket_dir().string().size(), 60u);
        EXPECT_EQ(query(pg.conninfo(), "SELECT 1"), "1");
        EXPECT_EQ(query(pg.conninfo(), "SELECT current_database()"), "queen");
        EXPECT_EQ(query(pg.conninfo(), "SHOW listen_addresses"), "");
        EXPECT_EQ(query(pg.conninfo(), "SHOW fsync"), "on");
        query(pg.conninfo(), "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')");
        EXPECT_NE(pg.psql_command().find("psql"), std::string::npos);
        EXPECT_NE(pg.psql_command().find(pg.socket_dir().string()), std::string::npos);
        pid = postmaster_pid(data);
        ASSERT_GT(pid, 0);
        EXPECT_TRUE(process_alive(pid));
        EXPECT_TRUE(fs::exists(data.parent_path() / "postgres.log"));

        // The asynchronous pool works over the unix socket too.
        runner r(1);
        pg_pool_options options;
        options.conninfo = pg.conninfo();
        options.size = 1;
        options.acquire_timeout = 10000ms;
        pg_pool pool(r.executor(), options);
        EXPECT_EQ(r.run(pool.exec("SELECT 5")).int64(0, 0), 5);
    }
    EXPECT_TRUE(wait_until([&] { return !process_alive(pid); }, 10000ms)) << "postmaster still running";
    EXPECT_FALSE(fs::exists(data / "postmaster.pid"));

    queen::embedded::embedded_postgres again({data, "", "queen"});
    EXPECT_FALSE(again.adopted());
    EXPECT_EQ(query(again.conninfo(), "SELECT v FROM kept"), "still here");
    const long pid2 = postmaster_pid(data);
    again.stop();
    EXPECT_TRUE(wait_until([&] { return !process_alive(pid2); }, 10000ms));
}

TEST(Embedded, SecondInstanceAdoptsRunningServer) {
    temp_dir tmp("emb", true);
    const fs::path data = tmp.path / "pgdata";
    auto first = std::make_unique<queen::embedded::embedded_postgres>(queen::embedded::embedded_options{data, "", "queen"});
    const long pid = postmaster_pid(data);
    {
        queen::embedded::embedded_postgres second({data, "", "queen"});
        EXPECT_TRUE(second.adopted());
        EXPECT_EQ(second.conninfo(), first->conninfo());
        EXPECT_EQ(postmaster_pid(data), pid);  // same server
        EXPECT_EQ(query(second.conninfo(), "SELECT 1"), "1");
        EXPECT_EQ(query(first->conninfo(), "SELECT 2"), "2");
    }  // the adopter owns the server it adopted and stops it
    EXPECT_TRUE(wait_until([&] { return !process_alive(pid); }, 10000ms));
    EXPECT_NO_THROW(first.reset());  // already stopped: nothing to do
}

TEST(Embedded, DataDirUnreachableByServerUserFailsClearly) {
    if (geteuid() != 0) GTEST_SKIP() << "only meaningful as root";
    temp_dir tmp("emb");  // 0700, owned by root
    const fs::path private_dir = tmp.path;
    try {
        queen::embedded::embedded_postgres pg({private_dir / "pgdata", "", "queen"});
        ADD_FAILURE() << "should not start";
    } catch (const std::runtime_error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(private_dir.string()), std::string::npos) << msg;
        EXPECT_NE(msg.find("QUEEN_DATA_DIR"), std::string::npos) << msg;
    }
}

TEST(Embedded, DefaultDataDir) {
    const auto dir = queen::embedded::embedded_postgres::default_data_dir();
    if (geteuid() == 0)
        EXPECT_EQ(dir, fs::path("/var/lib/queen/pgdata"));
    else
        EXPECT_EQ(dir.filename(), "pgdata");
}

namespace {

// How many times the prepared statement whose text contains `marker` ran on this connection
// (generic and custom plans; -1: no such statement here).
asio::awaitable<long> prepared_runs(pooled_connection& conn, const std::string& marker) {
    auto res = co_await conn.exec("SELECT coalesce(sum(generic_plans + custom_plans), -1)::int8 FROM pg_prepared_statements "
                                  "WHERE statement LIKE '%" +
                                  marker + "%' AND statement NOT LIKE '%pg_prepared_statements%'");
    co_return static_cast<long>(res.int64(0, 0));
}

// Runs sql with one text parameter on conn (the vector is built outside the co_await: g++ 12
// miscompiles braced lists inside one).
asio::awaitable<db_result> exec1(pooled_connection& conn, std::string sql, std::string arg) {
    std::vector<pg_param> params;
    params.push_back(pg_param::text(arg));
    co_return co_await conn.exec(sql, params);
}

}  // namespace

TEST(PgPool, StatementsWithParametersArePreparedOncePerConnection) {
    auto& cluster = shared_cluster();
    runner r(2);
    pg_pool pool(r.executor(), options_for(cluster, 1));
    r.run([&]() -> asio::awaitable<void> {
        auto conn = co_await pool.acquire();
        for (int i = 1; i <= 3; ++i) {
            auto res = co_await exec1(conn, "SELECT $1::int8 + 40 AS prep_once", std::to_string(i));
            EXPECT_EQ(res.int64(0, 0), 40 + i);
        }
        EXPECT_EQ(co_await prepared_runs(conn, "AS prep_once"), 3);
        // Without parameters: unnamed, nothing kept.
        co_await conn.exec("SELECT 1 AS prep_none");
        EXPECT_EQ(co_await prepared_runs(conn, "AS prep_none"), -1);
    }());
}

TEST(PgPool, PreparedStatementsOffRunsEveryStatementUnnamed) {
    auto& cluster = shared_cluster();
    runner r(2);
    auto opts = options_for(cluster, 1);
    opts.prepared_statements = false;
    pg_pool pool(r.executor(), opts);
    r.run([&]() -> asio::awaitable<void> {
        auto conn = co_await pool.acquire();
        auto res = co_await exec1(conn, "SELECT $1::int8 * 2 AS prep_off", "21");
        EXPECT_EQ(res.int64(0, 0), 42);
        EXPECT_EQ(co_await prepared_runs(conn, "AS prep_off"), -1);
    }());
}

TEST(PgPool, PreparedStatementIsPreparedAgainWhenTheServerLostOrOutdatedIt) {
    auto& cluster = shared_cluster();
    cluster.run_sql("DROP FUNCTION IF EXISTS prep_f(int8); CREATE FUNCTION prep_f(x int8) RETURNS int8 "
                    "LANGUAGE sql AS 'SELECT x + 1'");
    runner r(2);
    pg_pool pool(r.executor(), options_for(cluster, 1));
    r.run([&]() -> asio::awaitable<void> {
        auto conn = co_await pool.acquire();
        EXPECT_EQ((co_await exec1(conn, "SELECT prep_f($1::int8) AS v", "1")).int64(0, 0), 2);
        // The server forgot every prepared statement (DISCARD ALL, DEALLOCATE ALL).
        co_await conn.exec("DEALLOCATE ALL");
        EXPECT_EQ((co_await exec1(conn, "SELECT prep_f($1::int8) AS v", "2")).int64(0, 0), 3);
        EXPECT_EQ(co_await prepared_runs(conn, "prep_f($1::int8) AS v"), 1);
    }());
    // The function now returns text: the cached plan's result type no longer holds.
    cluster.run_sql("DROP FUNCTION prep_f(int8); CREATE FUNCTION prep_f(x int8) RETURNS text "
                    "LANGUAGE sql AS 'SELECT ''n'' || x'");
    r.run([&]() -> asio::awaitable<void> {
        auto conn = co_await pool.acquire();
        EXPECT_EQ((co_await exec1(conn, "SELECT prep_f($1::int8) AS v", "3")).text(0, 0), "n3");
        // Inside the caller's transaction block the failure aborted it: not retried, reported.
        co_await conn.exec("BEGIN");
        co_await conn.exec("DEALLOCATE ALL");
        try {
            co_await exec1(conn, "SELECT prep_f($1::int8) AS v", "4");
            ADD_FAILURE() << "a lost prepared statement inside a transaction block must fail";
        } catch (const pg_error& e) {
            EXPECT_EQ(e.sqlstate(), "26000");
        }
        co_await conn.exec("ROLLBACK");
        EXPECT_EQ((co_await exec1(conn, "SELECT prep_f($1::int8) AS v", "5")).text(0, 0), "n5");
        // A statement that cannot be prepared fails as it would run, and is not kept.
        try {
            co_await exec1(conn, "SELECT $1::int8 +", "1");
            ADD_FAILURE() << "a syntax error must fail";
        } catch (const pg_error& e) {
            EXPECT_EQ(e.sqlstate(), "42601");
        }
        EXPECT_EQ((co_await exec1(conn, "SELECT $1::int8 - 1 AS prep_after", "8")).int64(0, 0), 7);
    }());
    cluster.run_sql("DROP FUNCTION prep_f(int8)");
}
