// Schema application at a broker's start, next to brokers that serve traffic on the same
// database: unchanged procedures are not applied again, and applying them (an upgrade)
// waits for traffic instead of deadlocking with it.
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>

namespace queen::test {
namespace {

using nlohmann::json;

// One held connection: a transaction that stays open across statements.
class session {
public:
    explicit session(const std::string& conninfo) : conn_(PQconnectdb(conninfo.c_str()), &PQfinish) {
        if (PQstatus(conn_.get()) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(conn_.get()));
    }
    // Runs one statement; its error message, "" when it succeeded.
    std::string exec(const std::string& sql) { return send(sql) ? result() : PQerrorMessage(conn_.get()); }
    // Sends one statement without waiting for it.
    bool send(const std::string& sql) { return PQsendQuery(conn_.get(), sql.c_str()) == 1; }
    // Waits for the statement sent last; its error message, "" when it succeeded.
    std::string result() {
        std::string error;
        while (PGresult* r = PQgetResult(conn_.get())) {
            auto st = PQresultStatus(r);
            if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && error.empty()) error = PQresultErrorMessage(r);
            PQclear(r);
        }
        return error;
    }

private:
    std::unique_ptr<PGconn, decltype(&PQfinish)> conn_;
};

TEST(SchemaApply, ABrokerStartingOnTheSameProceduresAppliesNothing) {
    test_cluster db;
    std::string applied_at;
    {
        broker_process first(db.conninfo());
        EXPECT_NE(first.log().find("procedures applied"), std::string::npos) << first.log();
        applied_at = db.run_sql("SELECT applied_at FROM queen.procedure_bundle");
        ASSERT_FALSE(applied_at.empty());
    }
    broker_process second(db.conninfo());
    EXPECT_NE(second.log().find("procedures unchanged"), std::string::npos) << second.log();
    EXPECT_EQ(db.run_sql("SELECT applied_at FROM queen.procedure_bundle"), applied_at);
    EXPECT_EQ(db.run_sql("SELECT count(*) FROM queen.procedure_bundle"), "1");
    // Forgetting the fingerprint makes the next start apply the procedures again.
    db.run_sql("DELETE FROM queen.procedure_bundle");
    broker_process third(db.conninfo());
    EXPECT_NE(third.log().find("procedures applied"), std::string::npos) << third.log();
    auto c = client_of(second);
    const auto q = unique_name("after-apply");
    push_payloads(c, q, "p", {json(1)});
    auto r = pop(c, q, "batch=1", "p");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["messages"][0]["data"], json(1));
}

TEST(SchemaApply, AnApplyWaitingForTrafficHoldsNothingTheTrafficNeeds) {
    test_cluster db;
    { broker_process first(db.conninfo()); }
    db.run_sql("DELETE FROM queen.procedure_bundle");
    // A transaction of another broker as a push leaves it: log_partitions locked for writing.
    session tx(db.conninfo());
    ASSERT_EQ(tx.exec("BEGIN"), "");
    ASSERT_EQ(tx.exec("LOCK TABLE queen.log_partitions IN ROW EXCLUSIVE MODE"), "");
    // A second one that writes a dead letter: an apply that locked its trigger tables file by
    // file would wait for it while holding log_consumers.
    session dead_letter(db.conninfo());
    ASSERT_EQ(dead_letter.exec("BEGIN"), "");
    ASSERT_EQ(dead_letter.exec("LOCK TABLE queen.dead_letters IN ROW EXCLUSIVE MODE"), "");

    std::optional<broker_process> upgrading;
    std::exception_ptr start_error;
    std::thread starter([&] {
        try {
            upgrading.emplace(db.conninfo());
        } catch (...) {
            start_error = std::current_exception();
        }
    });
    struct join_at_exit {
        std::thread& t;
        ~join_at_exit() {
            if (t.joinable()) t.join();
        }
    } join_starter{starter};
    ASSERT_TRUE(eventually([&] {
        return sql_int(db, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'") > 0;
    }));
    // The first transaction goes on to a cursor. Had the apply been holding log_consumers, this
    // would wait, and once the dead letter commits, the apply would wait for log_partitions:
    // a deadlock in which the transaction, waiting longer, is the one PostgreSQL cancels.
    ASSERT_TRUE(tx.send("LOCK TABLE queen.log_consumers IN ROW EXCLUSIVE MODE"));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(dead_letter.exec("COMMIT"), "");
    EXPECT_EQ(tx.result(), "");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past deadlock_timeout
    EXPECT_EQ(tx.exec("COMMIT"), "");
    starter.join();
    if (start_error) {
        try {
            std::rethrow_exception(start_error);
        } catch (const std::exception& e) {
            FAIL() << "the upgrading broker did not start: " << e.what();
        }
    }
    ASSERT_TRUE(upgrading);
    EXPECT_NE(upgrading->log().find("trying again"), std::string::npos) << upgrading->log();
    EXPECT_NE(upgrading->log().find("procedures applied"), std::string::npos) << upgrading->log();
    auto c = client_of(*upgrading);
    const auto q = unique_name("gave-way");
    push_payloads(c, q, "p", {json("after")});
    auto r = pop(c, q, "batch=1", "p");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["messages"][0]["data"], json("after"));
}

TEST(SchemaApply, ApplyingTheProceduresUnderTrafficFailsNoRequest) {
    test_cluster db;
    broker_process serving(db.conninfo());
    const std::string in = unique_name("apply-in"), out = unique_name("apply-out");
    std::atomic<bool> done{false};
    std::atomic<int> pushed{0}, committed{0};
    std::mutex failures_mutex;
    std::vector<std::string> failures;
    auto fail = [&](const std::string& what, const http_reply& r) {
        std::lock_guard<std::mutex> lock(failures_mutex);
        failures.push_back(what + ": " + std::to_string(r.status) + " " + r.body);
    };
    // Each worker pushes to its own partition, pops, and acks + pushes onward in one
    // transaction: the statements that lock log_partitions and log_consumers together.
    auto worker = [&](int id) {
        auto c = client_of(serving);
        const std::string partition = "w" + std::to_string(id);
        for (int n = 0; !done; ++n) {
            const std::string tx = partition + "-" + std::to_string(n);
            auto p = c.post("/api/v1/push",
                            json{{"items", json::array({{{"queue", in}, {"partition", partition},
                                                         {"transactionId", tx}, {"payload", {{"n", n}}}}})}});
            if (p.status != 201) {
                fail("push", p);
                continue;
            }
            ++pushed;
            auto r = pop(c, in, "batch=1", partition);
            if (r.status != 200) {
                fail("pop", r);
                continue;
            }
            const auto body = r.json();
            const auto& m = body["messages"][0];
            json t{{"operations",
                    json::array({{{"type", "ack"}, {"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                                  {"leaseId", m["leaseId"]}, {"status", "completed"}},
                                 {{"type", "push"},
                                  {"items", json::array({{{"queue", out}, {"partition", partition},
                                                          {"transactionId", "out-" + m["transactionId"].get<std::string>()},
                                                          {"payload", m["data"]}}})}}})},
                   {"requiredLeases", json::array({body["leaseId"]})}};
            auto a = c.post("/api/v1/transaction", t);
            if (a.status != 200 || a.json()["success"] != true) {
                fail("transaction", a);
                continue;
            }
            ++committed;
        }
    };
    {
        joined_threads workers(done);
        for (int i = 0; i < 4; ++i) workers.start(worker, i);
        ASSERT_TRUE(eventually([&] { return committed.load() >= 20; }));
        for (int round = 0; round < 6; ++round) {
            db.run_sql("DELETE FROM queen.procedure_bundle");
            broker_process upgrading(db.conninfo());
            EXPECT_NE(upgrading.log().find("procedures applied"), std::string::npos) << upgrading.log();
        }
        const int before = committed.load();
        ASSERT_TRUE(eventually([&] { return committed.load() >= before + 20; }));
    }
    EXPECT_TRUE(failures.empty()) << failures.size() << " failed requests, the first: " << failures.front();
    // Every push is stored once; every committed transaction moved exactly one message onward.
    EXPECT_EQ(sql_int(db, "SELECT count(*) FROM queen.messages WHERE queue = " + quote(in)), pushed.load());
    EXPECT_EQ(sql_int(db, "SELECT count(*) FROM queen.messages WHERE queue = " + quote(out)), committed.load());
    EXPECT_EQ(sql_int(db, "SELECT count(DISTINCT transaction_id) FROM queen.messages WHERE queue = " + quote(out)),
              committed.load());
}

}  // namespace
}  // namespace queen::test
