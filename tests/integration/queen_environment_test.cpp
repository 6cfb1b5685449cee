// A broker started with a Queen deployment's environment (README, "Settings") behaves as
// that environment says: the database from PG_*, the spool in FILE_BUFFER_DIR, the pool of
// DB_POOL_SIZE, new groups from DEFAULT_SUBSCRIPTION_MODE, the sweep at the smaller of
// RETENTION_INTERVAL and EVICTION_INTERVAL; and the start-up line names each variable.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

class QueenEnvironment : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        db_ = new test_cluster();
        buffers_ = new temp_dir("buffers");
        broker_ = new broker_process("", {{"PG_HOST", "127.0.0.1"},
                                          {"PG_PORT", std::to_string(db_->port())},
                                          {"PG_USER", "postgres"},
                                          {"PG_DB", db_->database()},
                                          {"FILE_BUFFER_DIR", buffers_->path.string()},
                                          {"DB_POOL_SIZE", "3"},
                                          {"DEFAULT_SUBSCRIPTION_MODE", "new"},
                                          {"RETENTION_INTERVAL", "600000"},
                                          {"EVICTION_INTERVAL", "300"},
                                          {"PARTITION_CLEANUP_DAYS", "3"},
                                          {"DB_STATEMENT_TIMEOUT", "20000"}});
    }
    static void TearDownTestSuite() {
        delete broker_;
        delete buffers_;
        delete db_;
    }
    void TearDown() override { db_->run_sql("SELECT queen.set_maintenance(false, false)"); }

    static test_cluster* db_;
    static temp_dir* buffers_;
    static broker_process* broker_;
};
test_cluster* QueenEnvironment::db_ = nullptr;
temp_dir* QueenEnvironment::buffers_ = nullptr;
broker_process* QueenEnvironment::broker_ = nullptr;

TEST_F(QueenEnvironment, TheStartUpLineNamesTheVariableBehindEachValue) {
    const auto log = broker_->log();
    for (const std::string& expected :
         {std::string("pool_size=3 (DB_POOL_SIZE)"), "spool_dir=" + buffers_->path.string() + " (FILE_BUFFER_DIR)",
          std::string("housekeeping_interval_ms=300 (EVICTION_INTERVAL)"),
          std::string("partition_idle_s=259200 (PARTITION_CLEANUP_DAYS)"),
          std::string("default_subscription_mode=new (DEFAULT_SUBSCRIPTION_MODE)"),
          std::string("db_statement_timeout_ms=20000 (DB_STATEMENT_TIMEOUT)"),
          std::string("(PG_HOST, PG_PORT, PG_USER, PG_DB)")})
        EXPECT_NE(log.find(expected), std::string::npos) << expected << "\n" << log;
}

TEST_F(QueenEnvironment, ThePoolHasDbPoolSizeConnections) {
    auto c = client_of(*broker_);
    EXPECT_EQ(c.get("/metrics").json()["database"]["poolSize"], 3);
    // Under concurrent pushes the broker opens no more than its pool, the listener and the
    // housekeeper's connection.
    const auto q = unique_name("env-pool");
    std::vector<std::thread> producers;
    std::atomic<int> failures{0};
    for (int t = 0; t < 8; ++t)
        producers.emplace_back([&, t] {
            try {
                auto pc = client_of(*broker_);
                for (int i = 0; i < 20; ++i) push_payloads(pc, q, "p" + std::to_string(t), {json(i)});
            } catch (...) {
                ++failures;
            }
        });
    for (auto& p : producers) p.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(db_->run_sql("SELECT count(*) FROM queen.messages WHERE queue = " + quote(q)), "160");
    const auto backends = std::stoi(db_->run_sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'queen'"));
    EXPECT_LE(backends, 3 + 2);
}

TEST_F(QueenEnvironment, ANewGroupStartsFromNowAsDefaultSubscriptionModeSays) {
    auto c = client_of(*broker_);
    const auto q = unique_name("env-submode");
    push_payloads(c, q, "", {json("history")});
    EXPECT_EQ(pop(c, q, "consumerGroup=fresh").status, 204) << "the group registers at now: history is skipped";
    push_payloads(c, q, "", {json("news")});
    auto r = pop(c, q, "consumerGroup=fresh&batch=10");
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_EQ(r.json()["messages"].size(), 1u);
    EXPECT_EQ(r.json()["messages"][0]["data"], "news");
    // A pop that names its mode still gets it.
    auto all = pop(c, q, "consumerGroup=everything&subscriptionMode=all&batch=10");
    ASSERT_EQ(all.status, 200) << all.body;
    EXPECT_EQ(all.json()["messages"].size(), 2u);
}

TEST_F(QueenEnvironment, TheSpoolLivesInFileBufferDirAndDrainsOnce) {
    auto c = client_of(*broker_);
    const auto q = unique_name("env-spool");
    ASSERT_EQ(c.post("/api/v1/system/maintenance", json{{"enabled", true}}).status, 200);
    auto answers = push_payloads(c, q, "", {json(1), json(2), json(3)});
    for (const auto& a : answers) EXPECT_EQ(a["status"], "buffered");
    EXPECT_TRUE(fs::exists(buffers_->path / ("queen-" + std::to_string(broker_->port()) + ".spool")));
    ASSERT_EQ(c.post("/api/v1/system/maintenance", json{{"enabled", false}}).status, 200);
    ASSERT_TRUE(eventually([&] { return c.get("/api/v1/system/maintenance").json()["bufferedMessages"] == 0; }));
    EXPECT_EQ(db_->run_sql("SELECT count(*) FROM queen.messages WHERE queue = " + quote(q)), "3");
}

TEST_F(QueenEnvironment, RetentionRunsAtTheSmallerInterval) {
    auto c = client_of(*broker_);
    const auto q = unique_name("env-retention");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retentionEnabled", true}, {"retentionSeconds", 1}}}})
                  .status,
              200);
    push_payloads(c, q, "", {json("old")});
    ASSERT_EQ(db_->run_sql("SELECT count(*) FROM queen.messages WHERE queue = " + quote(q)), "1");
    // At RETENTION_INTERVAL's 10 minutes (or the 60 s default) the message would outlive the wait.
    EXPECT_TRUE(eventually([&] { return db_->run_sql("SELECT count(*) FROM queen.messages WHERE queue = " + quote(q)) == "0"; },
                           15s));
}

}  // namespace
}  // namespace queen::test
