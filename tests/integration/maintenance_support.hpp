#pragma once
// Helpers of the Maintenance and MaintenanceOutage tests (maintenance_flags, _restart and
// _outage_test.cpp): the maintenance routes, what the database stores of a queue, a consumer that
// checks offsets, and the fixture with one PostgreSQL cluster for the Maintenance suite.
#include "test_cluster.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace queen::test::maintenance_support {

using nlohmann::json;
using namespace std::chrono_literals;

// The routes of the push and of the pop maintenance flag.
inline constexpr const char* maintenance_path = "/api/v1/system/maintenance";
inline constexpr const char* pop_maintenance_path = "/api/v1/system/maintenance/pop";

// The environment of a broker that spools into `dir`.
inline std::map<std::string, std::string> spool_env(const temp_dir& dir) {
    return {{"QUEEN_SPOOL_DIR", dir.path.string()}};
}

// Polls `condition` every 25 ms until it holds or `limit` has passed; whether it held.
inline bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) return true;
        std::this_thread::sleep_for(25ms);
    }
    return condition();
}

// GET of a maintenance route, which must answer 200; its status.
inline json get_status(http_client& c, const std::string& path = maintenance_path) {
    auto r = c.get(path);
    if (r.status != 200) throw std::runtime_error("GET " + path + ": " + std::to_string(r.status) + " " + r.body);
    return r.json();
}

// Sets a maintenance flag through its route, which must answer 200; the answer.
inline json set_flag(http_client& c, const std::string& path, bool enabled) {
    auto r = c.post(path, json{{"enabled", enabled}});
    if (r.status != 200) throw std::runtime_error("POST " + path + ": " + std::to_string(r.status) + " " + r.body);
    return r.json();
}

// How many pushes the broker's spool holds now.
inline std::uint64_t buffered(http_client& c) { return get_status(c)["bufferedMessages"].get<std::uint64_t>(); }

// Pushes `items`, which must be answered 201; the answer per item.
inline json push_items(http_client& c, const json& items) {
    auto r = c.post("/api/v1/push", json{{"items", items}});
    if (r.status != 201) throw std::runtime_error("push: " + std::to_string(r.status) + " " + r.body);
    return r.json();
}

// "partition|transactionId" of every stored message of the queue, by partition then offset.
inline std::vector<std::string> stored(const test_cluster& db, const std::string& queue) {
    auto text = db.run_sql("SELECT string_agg(partition || '|' || transaction_id, E'\\n' ORDER BY partition, \"offset\") "
                           "FROM queen.messages WHERE queue = '" + queue + "'");
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string line; std::getline(ss, line);)
        if (!line.empty()) out.push_back(line);
    return out;
}

// Offsets of every partition of the queue are 1..n without a gap.
inline std::string gaps(const test_cluster& db, const std::string& queue) {
    return db.run_sql("SELECT count(*) FROM (SELECT partition, min(\"offset\") AS lo, max(\"offset\") AS hi, count(*) AS n "
                      "FROM queen.messages WHERE queue = '" + queue + "' GROUP BY partition) x "
                      "WHERE lo <> 1 OR hi <> n");
}

// How many log segments the queue has ("0": nothing of it reached the log).
inline std::string segments_of(const test_cluster& db, const std::string& queue) {
    return db.run_sql("SELECT count(*) FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id "
                      "JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = '" + queue + "'");
}

// Pops (and acks) everything of one partition; returns "partition|transactionId" in order,
// and checks that offsets follow each other without a gap.
inline std::vector<std::string> consume_partition(http_client& c, const std::string& queue, const std::string& partition) {
    std::vector<std::string> out;
    std::int64_t expected = 1;
    for (;;) {
        auto r = pop(c, queue, "batch=500", partition);
        if (r.status == 204) break;
        if (r.status != 200) throw std::runtime_error("pop: " + std::to_string(r.status) + " " + r.body);
        auto body = r.json();
        for (const auto& m : body["messages"]) {
            EXPECT_EQ(m["offset"].get<std::int64_t>(), expected) << queue << "/" << partition;
            expected = m["offset"].get<std::int64_t>() + 1;
            out.push_back(partition + "|" + m["transactionId"].get<std::string>());
        }
        const auto& last = body["messages"].back();
        ack(c, last);
    }
    return out;
}

// The Maintenance suite's fixture: one PostgreSQL cluster for the suite, on which each test starts
// its own brokers; both maintenance flags are cleared after each test. Here, in a named namespace,
// because GoogleTest wants one fixture class (and one cluster) for all of a suite's files.
class Maintenance : public ::testing::Test {
protected:
    static void SetUpTestSuite() { db_ = new test_cluster(); }
    static void TearDownTestSuite() {
        delete db_;
        db_ = nullptr;
    }
    void TearDown() override { db_->run_sql("SELECT queen.set_maintenance(false, false)"); }
    static test_cluster& db() { return *db_; }

    inline static test_cluster* db_ = nullptr;
};

}  // namespace queen::test::maintenance_support
