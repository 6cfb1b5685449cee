// The broker against a database that goes away and comes back, and with its own embedded one.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;

TEST(Recovery, BrokerAnswers503WhileTheDatabaseIsDownAndRecoversAfterwards) {
    test_cluster db;
    broker_process b(db.conninfo());
    auto c = client_of(b);
    auto q = unique_name("outage");
    push_payloads(c, q, "", {json(1)});
    db.stop();
    auto health = c.get("/health");
    EXPECT_EQ(health.status, 503);
    EXPECT_EQ(health.json()["database"], "disconnected");
    auto popped = pop(c, q);
    EXPECT_EQ(popped.status, 503);
    EXPECT_EQ(popped.headers["retry-after"], "1");
    EXPECT_EQ(popped.json()["error"], "database unavailable");
    db.start();
    // The pool replaces its broken connections: the next requests work.
    http_reply after;
    for (int i = 0; i < 50; ++i) {
        after = c.get("/health");
        if (after.status == 200) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(after.status, 200);
    push_payloads(c, q, "", {json(2)});
    auto r = pop(c, q, "batch=10");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["messages"].size(), 2u);
}

TEST(Recovery, NewerDatabaseSchemaIsRefused) {
    test_cluster db;
    { broker_process b(db.conninfo()); }
    db.run_sql("INSERT INTO queen.schema_version (version, name) VALUES (9999, '9999_future.sql')");
    try {
        broker_process b(db.conninfo());
        FAIL() << "a broker must refuse a newer schema";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("newer than this broker"), std::string::npos) << e.what();
    }
}

TEST(Recovery, SchemaIsAppliedOnceAndNeedsNoExtension) {
    test_cluster db({}, "queen_test", codec_setup::stock);
    { broker_process a(db.conninfo()); }
    { broker_process b(db.conninfo()); }
    EXPECT_EQ(db.run_sql("SELECT count(*) FROM queen.schema_version"),
              db.run_sql("SELECT max(version) FROM queen.schema_version"));
    EXPECT_EQ(db.run_sql("SELECT string_agg(extname, ',') FROM pg_extension"), "plpgsql");
    // QUEEN_APPLY_SCHEMA=0 starts against an existing schema without touching it.
    broker_process c(db.conninfo(), {{"QUEEN_APPLY_SCHEMA", "0"}});
    EXPECT_NE(c.log().find("apply_schema=false (QUEEN_APPLY_SCHEMA)"), std::string::npos) << c.log();
}

TEST(Embedded, BrokerStartsItsOwnPostgresAndStopsItOnExit) {
    auto dir = std::filesystem::path("/tmp") / unique_name("queen-embedded");
    std::filesystem::create_directories(dir);
    std::filesystem::permissions(dir, std::filesystem::perms::all);
    auto port = broker_process::free_port();
    std::string log_path = (dir / "broker.log").string();
    pid_t pid = ::fork();
    if (pid == 0) {
        std::string data = "QUEEN_DATA_DIR=" + (dir / "data").string();
        std::string port_env = "PORT=" + std::to_string(port);
        std::string path = std::string("PATH=") + (getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
        char* envp[] = {data.data(), port_env.data(), const_cast<char*>("HOST=127.0.0.1"), path.data(), nullptr};
        FILE* f = std::fopen(log_path.c_str(), "w");
        ::dup2(fileno(f), 1);
        ::dup2(fileno(f), 2);
        char* argv[] = {const_cast<char*>(QUEEN_BROKER_BINARY), nullptr};
        ::execve(QUEEN_BROKER_BINARY, argv, envp);
        ::_exit(127);
    }
    int healthy = 0;
    for (int i = 0; i < 600 && !healthy; ++i) {
        try {
            http_client c("127.0.0.1", port);
            auto h = c.get("/health");
            if (h.status == 200 && h.json()["databaseMode"] == "embedded") healthy = 1;
        } catch (...) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    std::ifstream in(log_path);
    std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(healthy) << log;
    EXPECT_NE(log.find("psql \"host=/tmp/queen-pg-"), std::string::npos) << log;
    auto pidfile = dir / "data" / "postmaster.pid";
    EXPECT_TRUE(std::filesystem::exists(pidfile));
    ::kill(pid, SIGTERM);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a clean exit on SIGTERM";
    EXPECT_FALSE(std::filesystem::exists(pidfile)) << "no orphan server is left behind";
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace queen::test
