// Hardened database connections (docs/deployment.md): SSL toward PostgreSQL with a
// certificate the test makes, a refused certificate stopping the start, multi-host conninfo
// with a dead first host, a failover to a promoted standby, keepalives on every connection,
// and the statement timeout.
#include "shell_command.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <libpq-fe.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;


// A self-signed certificate for localhost and 127.0.0.1 (it is its own root): <name>.crt and
// <name>.key, the key readable only by the server's user.
void make_certificate(const fs::path& dir, const std::string& name, const std::string& cn) {
    const auto crt = dir / (name + ".crt"), key = dir / (name + ".key");
    const std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
                            "-subj /CN=" + cn + " -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
                            key.string() + " -out " + crt.string() + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("openssl could not make a certificate");
    ::chmod(crt.c_str(), 0644);
    ::chmod(key.c_str(), 0600);
    if (::geteuid() == 0) {
        if (struct passwd* pw = ::getpwnam("postgres"))
            if (::chown(key.c_str(), pw->pw_uid, pw->pw_gid) != 0) throw std::runtime_error("chown of the key failed");
    }
}

std::map<std::string, std::string> ssl_settings(const temp_dir& dir) {
    return {{"ssl", "on"},
            {"ssl_cert_file", (dir.path / "server.crt").string()},
            {"ssl_key_file", (dir.path / "server.key").string()}};
}

// "<with SSL>/<without SSL>": the broker's backends (application_name queen).
std::string broker_backends_by_ssl(const test_cluster& db) {
    return db.run_sql(
        "SELECT count(*) FILTER (WHERE s.ssl) || '/' || count(*) FILTER (WHERE NOT s.ssl) "
        "FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.application_name = 'queen'");
}

std::string count_messages(const test_cluster& db, const std::string& queue) {
    return db.run_sql("SELECT count(*) FROM queen.messages WHERE queue = " + quote(queue));
}

// Pushes one item with a fixed transaction id; the reply.
http_reply push_one(http_client& c, const std::string& queue, const std::string& txid) {
    return c.post("/api/v1/push", json{{"items", {{{"queue", queue}, {"transactionId", txid}, {"payload", txid}}}}});
}

TEST(DatabaseSsl, PgUseSslConnectsEveryBrokerConnectionOverSsl) {
    temp_dir dir("dbconn", true);
    make_certificate(dir.path, "server", "localhost");
    test_cluster db(ssl_settings(dir));
    // A Queen deployment's variables, no QUEEN_DATABASE_URL.
    broker_process b("", {{"PG_HOST", "127.0.0.1"},
                          {"PG_PORT", std::to_string(db.port())},
                          {"PG_USER", "postgres"},
                          {"PG_DB", db.database()},
                          {"PG_USE_SSL", "true"}});
    auto c = client_of(b);
    const auto q = unique_name("ssl");
    push_payloads(c, q, "", {json("over ssl")});
    ASSERT_EQ(pop(c, q).status, 200);
    const auto by_ssl = broker_backends_by_ssl(db);
    EXPECT_NE(by_ssl.substr(0, 2), "0/") << by_ssl;
    EXPECT_EQ(by_ssl.substr(by_ssl.find('/')), "/0") << "every broker connection uses SSL: " << by_ssl;
    EXPECT_NE(b.log().find("db_sslmode=require (PG_USE_SSL)"), std::string::npos) << b.log();
}

TEST(DatabaseSsl, VerifyFullWithTheServersRootCertificateConnects) {
    temp_dir dir("dbconn", true);
    make_certificate(dir.path, "server", "localhost");
    test_cluster db(ssl_settings(dir));
    broker_process b(db.conninfo() + " host=localhost sslmode=verify-full sslrootcert=" +
                     (dir.path / "server.crt").string());
    auto c = client_of(b);
    const auto q = unique_name("verify-full");
    push_payloads(c, q, "", {json(1)});
    EXPECT_EQ(count_messages(db, q), "1");
    const auto by_ssl = broker_backends_by_ssl(db);
    EXPECT_EQ(by_ssl.substr(by_ssl.find('/')), "/0") << by_ssl;
}

TEST(DatabaseSsl, VerifyFullWithAWrongRootCertificateRefusesToStart) {
    temp_dir dir("dbconn", true);
    make_certificate(dir.path, "server", "localhost");
    make_certificate(dir.path, "impostor", "localhost");
    test_cluster db(ssl_settings(dir));
    try {
        broker_process b(db.conninfo() + " host=localhost sslmode=verify-full sslrootcert=" +
                             (dir.path / "impostor.crt").string(),
                         {{"QUEEN_DB_STARTUP_WAIT_MS", "0"}});
        FAIL() << "the broker started with a server certificate its root does not sign:\n" << b.log();
    } catch (const std::runtime_error& e) {
        const std::string why = e.what();
        EXPECT_NE(why.find("broker exited during start-up"), std::string::npos) << why;
        EXPECT_NE(why.find("cannot connect to PostgreSQL"), std::string::npos) << why;
        EXPECT_NE(why.find("certificate verify failed"), std::string::npos) << why;
    }
    EXPECT_EQ(db.run_sql("SELECT to_regclass('queen.queues') IS NULL"), "t") << "nothing was done to the database";
}

TEST(DatabaseMultiHost, ADeadFirstHostIsSkipped) {
    test_cluster db;
    const auto dead = broker_process::free_port();
    broker_process b("host=127.0.0.1,127.0.0.1 port=" + std::to_string(dead) + "," + std::to_string(db.port()) +
                     " dbname=" + db.database() + " user=postgres");
    auto c = client_of(b);
    const auto q = unique_name("multihost");
    push_payloads(c, q, "", {json(1), json(2)});
    EXPECT_EQ(count_messages(db, q), "2");
    auto r = pop(c, q, "batch=10");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["messages"].size(), 2u);
}

// The primary dies, the standby is promoted: the broker follows (target_session_attrs=
// read-write passes over the standby until then), and every push answered before, during
// (spooled) and after the failover is stored exactly once on the new primary.
TEST(DatabaseMultiHost, AFailoverToAPromotedStandbyIsFollowed) {
    auto primary = std::make_unique<test_cluster>(std::map<std::string, std::string>{{"synchronous_commit", "on"}});
    auto standby = test_cluster::standby_of(*primary);
    temp_dir spool("dbconn", true);
    broker_process b("host=127.0.0.1,127.0.0.1 port=" + std::to_string(primary->port()) + "," +
                         std::to_string(standby->port()) + " dbname=" + primary->database() + " user=postgres",
                     {{"QUEEN_SPOOL_DIR", spool.path.string()}});
    auto c = client_of(b);
    const auto q = unique_name("failover");
    std::vector<std::string> answered;
    auto push_round = [&](const std::string& prefix, int n, const std::string& expected_status) {
        for (int i = 0; i < n; ++i) {
            const auto txid = prefix + std::to_string(i);
            auto r = push_one(c, q, txid);
            ASSERT_EQ(r.status, 201) << r.body;
            EXPECT_EQ(r.json()[0]["status"], expected_status) << txid;
            answered.push_back(txid);
        }
    };
    push_round("before-", 20, "queued");
    // Streamed to the standby before the primary goes.
    ASSERT_TRUE(eventually([&] { return count_messages(*standby, q) == "20"; }));
    primary->stop();
    push_round("during-", 20, "buffered");
    standby->promote();
    ASSERT_TRUE(eventually([&] {
        auto s = c.get("/api/v1/system/maintenance");
        return s.status == 200 && s.json()["bufferedMessages"] == 0;
    }, 30s)) << b.log();
    push_round("after-", 20, "queued");

    EXPECT_EQ(count_messages(*standby, q), "60");
    EXPECT_EQ(standby->run_sql("SELECT count(DISTINCT transaction_id) FROM queen.messages WHERE queue = " + quote(q)),
              "60");
    std::set<std::string> stored;
    std::stringstream ids(standby->run_sql(
        "SELECT string_agg(transaction_id, E'\\n') FROM queen.messages WHERE queue = " + quote(q)));
    for (std::string id; std::getline(ids, id);) stored.insert(id);
    EXPECT_EQ(stored, std::set<std::string>(answered.begin(), answered.end()));

    // A consumer group reads all of them, in push order, from the new primary.
    std::vector<std::string> delivered;
    ASSERT_TRUE(eventually([&] {
        auto r = pop(c, q, "consumerGroup=g&batch=100&autoAck=true");
        if (r.status != 200) return delivered.size() >= answered.size();
        const auto body = r.json();
        for (const auto& m : body["messages"]) delivered.push_back(m["transactionId"].get<std::string>());
        return delivered.size() >= answered.size();
    }, 30s)) << delivered.size() << " delivered\n" << b.log();
    EXPECT_EQ(delivered, answered) << b.log();
}

// Process `pid`'s established TCP connections to `port`, by local address, each with its keepalive
// timer (ss's "timer:(keepalive,4.2sec,0)" field; "" when ss shows none). Why by process: other
// tests run beside this one, and a socket of theirs whose remote port number happens to be
// `port` is not the broker's.
std::map<std::string, std::string> keepalive_timers_of(int pid, int port) {
    const std::string cmd = "ss -tnopH state established '( dport = :" + std::to_string(port) + " )' 2>/dev/null";
    const std::string owner = "pid=" + std::to_string(pid) + ",";
    std::istringstream lines(run_shell(cmd).out);
    std::map<std::string, std::string> timers;
    std::string l;
    while (std::getline(lines, l)) {
        if (l.find(owner) == std::string::npos) continue;
        std::istringstream columns(l);
        std::string recv_q, send_q, local;
        columns >> recv_q >> send_q >> local;
        const auto at = l.find("timer:(keepalive,");
        if (at == std::string::npos) {
            timers[local] = "";
            continue;
        }
        const auto from = at + std::string("timer:(keepalive,").size();
        timers[local] = l.substr(from, l.find(',', from) - from);
    }
    return timers;
}

TEST(DatabaseKeepalives, EveryBrokerConnectionProbesAfterSecondsNotHours) {
    test_cluster db;
    broker_process b(db.conninfo(), {{"QUEEN_DB_KEEPALIVES_IDLE_S", "7"}});
    auto c = client_of(b);
    push_payloads(c, unique_name("keepalive"), "", {json(1)});
    // The broker's connections to this cluster: the pool's, the listener's and the housekeeper's.
    // Why more than one look: a connection with data in flight shows its retransmission timer
    // (timer:(on,...)) in place of the keepalive one, and the broker's background work can be
    // on the wire at any moment; an idle connection shows its keepalive timer.
    std::map<std::string, std::string> keepalive_seen;
    std::vector<std::string> never_seen;
    std::size_t open = 0;
    const bool every_one_probes = eventually([&] {
        const auto now = keepalive_timers_of(b.pid(), db.port());
        open = now.size();
        never_seen.clear();
        for (const auto& [local, timer] : now) {
            if (!timer.empty()) keepalive_seen[local] = timer;
            else if (!keepalive_seen.count(local)) never_seen.push_back(local);
        }
        return open >= 2 && never_seen.empty();
    }, 10s);
    ASSERT_TRUE(every_one_probes) << open << " connections; without keepalives: " << ::testing::PrintToString(never_seen);
    for (const auto& [local, t] : keepalive_seen)
        EXPECT_TRUE(t.size() > 3 && (t.substr(t.size() - 3) == "sec" || t.substr(t.size() - 2) == "ms"))
            << "the kernel's two-hour idle time, not 7 s: " << local << " " << t;
}

// A connection of the test's own holding a lock until it is destroyed.
struct lock_holder {
    std::unique_ptr<PGconn, decltype(&PQfinish)> conn;
    lock_holder(const test_cluster& db, const std::string& table) : conn(PQconnectdb(db.conninfo().c_str()), &PQfinish) {
        if (PQstatus(conn.get()) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(conn.get()));
        for (const std::string& sql : {std::string("BEGIN"), "LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE"}) {
            std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(conn.get(), sql.c_str()), &PQclear);
            if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) throw std::runtime_error(PQerrorMessage(conn.get()));
        }
    }
};

TEST(DatabaseStatementTimeout, AStatementOverTheTimeoutIs503AndCountedAndStoresNothing) {
    test_cluster db;
    broker_process b(db.conninfo(), {{"DB_STATEMENT_TIMEOUT", "1000"}});
    auto c = client_of(b);
    const auto q = unique_name("stmt-timeout");
    push_payloads(c, q, "", {json("queue exists")});
    {
        lock_holder lock(db, "queen.log_segments");
        auto r = push_one(c, q, "timed-out");
        EXPECT_EQ(r.status, 503) << r.body;
        EXPECT_EQ(r.json()["error"], "database statement timed out");
        EXPECT_EQ(r.headers["retry-after"], "1");
        EXPECT_EQ(r.body.find("canceling"), std::string::npos) << "no PostgreSQL text: " << r.body;
        auto metrics = c.get("/metrics/prometheus");
        EXPECT_NE(metrics.body.find("queen_db_errors_total{class=\"57\"}"), std::string::npos) << metrics.body;
    }
    EXPECT_EQ(db.run_sql("SELECT count(*) FROM queen.messages WHERE transaction_id = 'timed-out'"), "0");
    auto again = push_one(c, q, "timed-out");
    ASSERT_EQ(again.status, 201) << again.body;
    EXPECT_EQ(again.json()[0]["status"], "queued");
    EXPECT_EQ(count_messages(db, q), "2");
}

}  // namespace
}  // namespace queen::test
