// Switching the database's path while a broker works: CREATE EXTENSION queen_ext and DROP
// EXTENSION queen_ext under a steady push and consume load, with no broker restart. The next
// calls take the other path (docs/extension.md, "How the broker uses it"), and every message
// pushed is stored and delivered exactly once, in order within its partition.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

using nlohmann::json;

constexpr int kPartitions = 4;
constexpr int kBatch = 20;

// One push of batch `b`: kBatch items over kPartitions partitions, transaction ids fixed by
// (b, j), so that a retried batch is recognised as the same messages.
json batch_body(const std::string& q, int b) {
    json items = json::array();
    for (int j = 0; j < kBatch; ++j) {
        int p = j % kPartitions;
        items.push_back(json{{"queue", q},
                             {"partition", "p" + std::to_string(p)},
                             {"transactionId", "switch-" + std::to_string(b) + "-" + std::to_string(j)},
                             {"payload", {{"b", b}, {"j", j}, {"p", p}}}});
    }
    return json{{"items", items}};
}

// Delivered payloads by partition, in delivery order.
struct deliveries {
    std::mutex mu;
    std::map<int, std::vector<int>> by_partition;  // b * kBatch + j
    void add(const json& data) {
        std::lock_guard<std::mutex> lock(mu);
        by_partition[data["p"].get<int>()].push_back(data["b"].get<int>() * kBatch + data["j"].get<int>());
    }
};

// Pops up to 50 messages and acks them all; false when the queue had none.
bool consume_once(http_client& c, const std::string& q, deliveries& got) {
    auto r = pop(c, q, "batch=50&wait=false");
    if (r.status != 200) return false;
    auto messages = r.json()["messages"];
    if (messages.empty()) return false;
    json acks = json::array();
    for (const auto& m : messages) {
        got.add(m["data"]);
        acks.push_back(json{{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                            {"leaseId", m["leaseId"]}, {"status", "completed"}});
    }
    auto a = c.post("/api/v1/ack/batch", json{{"acknowledgments", acks}});
    EXPECT_EQ(a.status, 200) << a.body;
    return true;
}

TEST(CodecPath, CreateAndDropUnderLoadLoseAndDoubleNothing) {
    test_cluster db({}, "queen_test", codec_setup::stock);
    if (db.run_sql("SELECT count(*) FROM pg_available_extensions WHERE name = 'queen_ext'") != "1") {
        if (extension_run()) FAIL() << "queen_ext is not installed (make ext-install)";
        GTEST_SKIP() << "queen_ext is not installed in PostgreSQL's directories";
    }
    broker_process b(db.conninfo());
    auto q = unique_name("codec-switch");

    std::atomic<bool> stop{false};
    std::atomic<int> pushed_batches{0};
    std::atomic<int> failed_attempts{0};
    deliveries got;
    {
        joined_threads workers(stop);
        workers.start([&] {
            auto c = client_of(b);
            for (int n = 0; !stop; ++n) {
                // A refused attempt is retried with the same ids, as clients retry.
                for (int attempt = 0; attempt < 100; ++attempt) {
                    auto r = c.post("/api/v1/push", batch_body(q, n));
                    if (r.status == 201) break;
                    ++failed_attempts;
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                }
                ++pushed_batches;
            }
        });
        workers.start([&] {
            auto c = client_of(b);
            while (!stop)
                if (!consume_once(c, q, got)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        });

        auto segments_with_codec = [&](int codec, const std::string& after) {
            return sql_int(db, "SELECT count(*) FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = "
                               "s.partition_id JOIN queen.queues qq ON qq.id = p.queue_id WHERE qq.name = " +
                                   quote(q) + " AND s.codec = " + std::to_string(codec) + " AND s.created_at > " +
                                   after);
        };
        ASSERT_TRUE(eventually([&] { return pushed_batches >= 20; })) << "the load did not start";
        for (int round = 0; round < 2; ++round) {
            std::string t = quote(db.run_sql("SELECT clock_timestamp()"));
            db.run_sql("CREATE EXTENSION queen_ext");
            EXPECT_TRUE(eventually([&] { return segments_with_codec(1, t) > 0; }, std::chrono::seconds(10)))
                << "pushes did not take the extension's path after CREATE EXTENSION";
            t = quote(db.run_sql("SELECT clock_timestamp()"));
            db.run_sql("DROP EXTENSION queen_ext");
            EXPECT_TRUE(eventually([&] { return segments_with_codec(0, t) > 0; }, std::chrono::seconds(10)))
                << "pushes did not take the stock path after DROP EXTENSION";
        }
        db.run_sql("CREATE EXTENSION queen_ext");
        // The C push runs (the test clusters track function calls; busy sessions report
        // them about once a second).
        EXPECT_TRUE(eventually([&] {
            return sql_int(db, "SELECT calls FROM pg_stat_user_functions WHERE schemaname = 'queen_ext' "
                               "AND funcname = 'push'") > 0;
        }));
    }
    auto c = client_of(b);
    while (consume_once(c, q, got)) {
    }

    const int batches = pushed_batches;
    ASSERT_GT(batches, 40);
    // Stored: every message once, offsets dense per partition.
    EXPECT_EQ(sql_int(db, "SELECT count(*) FROM queen.messages WHERE queue = " + quote(q)), batches * kBatch);
    EXPECT_EQ(sql_int(db, "SELECT count(DISTINCT transaction_id) FROM queen.messages WHERE queue = " + quote(q)),
              batches * kBatch);
    EXPECT_EQ(sql_int(db, "SELECT count(*) FROM queen.messages WHERE queue = " + quote(q) +
                              " AND payload IS NULL"),
              0)
        << "with the extension installed again every segment decodes";
    // Delivered: every message once, in push order within its partition.
    int delivered = 0;
    for (int p = 0; p < kPartitions; ++p) {
        const auto& seq = got.by_partition[p];
        delivered += static_cast<int>(seq.size());
        std::vector<int> want;
        for (int n = 0; n < batches; ++n)
            for (int j = p; j < kBatch; j += kPartitions) want.push_back(n * kBatch + j);
        EXPECT_EQ(seq, want) << "partition p" << p;
    }
    EXPECT_EQ(delivered, batches * kBatch);
    RecordProperty("refused_push_attempts", failed_attempts.load());
}

}  // namespace
}  // namespace queen::test
