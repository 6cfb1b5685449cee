// Exact dedup by transactionId within a partition and the queue's dedup window.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;

json push_item(http_client& c, const json& item) {
    auto r = c.post("/api/v1/push", json{{"items", json::array({item})}});
    EXPECT_EQ(r.status, 201) << r.body;
    return r.json()[0];
}

std::string stored_count(const std::string& queue) {
    return std::to_string(data_sum("SELECT count(*) FROM queen.messages WHERE queue = '" + queue + "'"));
}

TEST(Dedup, SecondPushOfAnIdIsADuplicateWithTheOriginalsId) {
    auto c = client();
    auto q = unique_name("dedup");
    auto first = push_item(c, {{"queue", q}, {"transactionId", "tx-1"}, {"payload", "original"}});
    auto second = push_item(c, {{"queue", q}, {"transactionId", "tx-1"}, {"payload", "different payload"}});
    EXPECT_EQ(first["status"], "queued");
    EXPECT_EQ(second["status"], "duplicate");
    EXPECT_EQ(second["message_id"], first["message_id"]);
    EXPECT_EQ(second["transaction_id"], "tx-1");
    EXPECT_EQ(stored_count(q), "1");
    EXPECT_EQ(pop(c, q, "batch=10").json()["messages"][0]["data"], "original");
}

TEST(Dedup, DuplicatesInsideOneRequestKeepTheFirst) {
    auto c = client();
    auto q = unique_name("intra");
    json items = json::array({{{"queue", q}, {"transactionId", "a"}, {"payload", 1}},
                              {{"queue", q}, {"transactionId", "b"}, {"payload", 2}},
                              {{"queue", q}, {"transactionId", "a"}, {"payload", 3}}});
    auto r = c.post("/api/v1/push", json{{"items", items}}).json();
    EXPECT_EQ(r[0]["status"], "queued");
    EXPECT_EQ(r[1]["status"], "queued");
    EXPECT_EQ(r[2]["status"], "duplicate");
    EXPECT_EQ(r[2]["message_id"], r[0]["message_id"]);
    EXPECT_EQ(r[1]["offset"], 2) << "offsets stay dense: the duplicate took none";
    EXPECT_EQ(stored_count(q), "2");
}

TEST(Dedup, EightConcurrentPushesOfOneIdStoreExactlyOne) {
    auto q = unique_name("race");
    std::mutex mu;
    std::vector<json> answers;
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i)
        threads.emplace_back([&, i] {
            auto c = client();
            auto a = push_item(c, {{"queue", q}, {"partition", "p"}, {"transactionId", "same"}, {"payload", i}});
            std::lock_guard lock(mu);
            answers.push_back(a);
        });
    for (auto& t : threads) t.join();
    ASSERT_EQ(answers.size(), 8u);
    int queued = 0;
    std::set<std::string> ids;
    for (auto& a : answers) {
        queued += a["status"] == "queued";
        ids.insert(a["message_id"].get<std::string>());
    }
    EXPECT_EQ(queued, 1);
    EXPECT_EQ(ids.size(), 1u) << "every answer carries the winner's message_id";
    EXPECT_EQ(stored_count(q), "1");
}

TEST(Dedup, SameIdInAnotherPartitionIsANewMessage) {
    auto c = client();
    auto q = unique_name("other-partition");
    auto a = push_item(c, {{"queue", q}, {"partition", "x"}, {"transactionId", "t"}, {"payload", 1}});
    auto b = push_item(c, {{"queue", q}, {"partition", "y"}, {"transactionId", "t"}, {"payload", 2}});
    EXPECT_EQ(a["status"], "queued");
    EXPECT_EQ(b["status"], "queued");
    EXPECT_NE(a["message_id"], b["message_id"]);
    EXPECT_EQ(stored_count(q), "2");
}

TEST(Dedup, WindowZeroTurnsDedupOff) {
    auto c = client();
    auto q = unique_name("nodedup");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"dedupWindowSeconds", 0}}}}).status, 200);
    auto a = push_item(c, {{"queue", q}, {"transactionId", "t"}, {"payload", 1}});
    auto b = push_item(c, {{"queue", q}, {"transactionId", "t"}, {"payload", 2}});
    EXPECT_EQ(a["status"], "queued");
    if (sharded_run()) {
        // Over shards a push's retry must be recognised even without a window: each shard keeps
        // receipts of what it stored for minutes (docs/scaling.md, "Differences from one database").
        EXPECT_EQ(b["status"], "duplicate");
        EXPECT_EQ(stored_count(q), "1");
        return;
    }
    EXPECT_EQ(b["status"], "queued");
    EXPECT_EQ(stored_count(q), "2");
}

TEST(Dedup, ExpiredWindowIsComparedByTime) {
    auto c = client();
    auto q = unique_name("window");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"dedupWindowSeconds", 1}}}}).status, 200);
    auto a = push_item(c, {{"queue", q}, {"transactionId", "t"}, {"payload", 1}});
    EXPECT_EQ(push_item(c, {{"queue", q}, {"transactionId", "t"}, {"payload", 2}})["status"], "duplicate");
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    auto late = push_item(c, {{"queue", q}, {"transactionId", "t"}, {"payload", 3}});
    EXPECT_EQ(late["status"], "queued") << "outside the window the id is new again, no sweep needed";
    EXPECT_NE(late["message_id"], a["message_id"]);
    EXPECT_EQ(stored_count(q), "2");
}

}  // namespace
}  // namespace queen::test
