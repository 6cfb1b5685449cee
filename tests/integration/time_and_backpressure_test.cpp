// Queue options that act on time and size: maxSize (429), delayedProcessing, windowBuffer,
// maxWaitTimeSeconds (dead letters with reason expired).
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;

std::string stored(const std::string& q) {
    return std::to_string(data_sum("SELECT count(*) FROM queen.messages WHERE queue = '" + q + "'"));
}

TEST(BackPressure, PushesBeyondMaxSizeAre429AndNothingIsDropped) {
    auto c = client();
    auto q = unique_name("full");
    configure_queue(c, q, {{"maxSize", 3}});
    push_payloads(c, q, "a", {json(1), json(2)});
    // maxSize counts a queue's messages across its partitions on one database, and on each shard
    // database over shards (docs/scaling.md): there, the refused push names the same partition.
    const std::string other_partition = sharded_run() ? "a" : "b";
    auto refused = c.post("/api/v1/push", json{{"items", {{{"queue", q}, {"partition", other_partition}, {"payload", 3}},
                                                          {{"queue", q}, {"partition", other_partition}, {"payload", 4}}}}});
    EXPECT_EQ(refused.status, 429);
    EXPECT_EQ(refused.headers["retry-after"], "1");
    EXPECT_NE(refused.json()["error"].get<std::string>().find("is full"), std::string::npos) << refused.body;
    EXPECT_EQ(stored(q), "2") << "a refused request stores nothing";
    // A push to another queue in a fused neighbour request is unaffected.
    auto other = unique_name("not-full");
    push_payloads(c, other, "", {json(1)});
    EXPECT_EQ(stored(other), "1");
    // Consuming frees room.
    auto m = pop(c, q, "batch=2").json()["messages"];
    ack(c, m[1]);
    auto accepted = c.post("/api/v1/push", json{{"items", {{{"queue", q}, {"payload", 3}}, {{"queue", q}, {"payload", 4}}}}});
    EXPECT_EQ(accepted.status, 201) << accepted.body;
    EXPECT_EQ(stored(q), "4");
}

TEST(TimeBased, DelayedProcessingHidesMessagesUntilTheyAreOldEnough) {
    auto c = client();
    auto q = unique_name("delayed");
    configure_queue(c, q, {{"delayedProcessing", 1}});
    push_payloads(c, q, "", {json("later")});
    EXPECT_EQ(pop(c, q).status, 204);
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    auto r = pop(c, q);
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.json()["messages"][0]["data"], "later");
}

TEST(TimeBased, WindowBufferServesAPartitionOnlyWhenItsNewestMessageIsOldEnough) {
    auto c = client();
    auto q = unique_name("window");
    configure_queue(c, q, {{"windowBuffer", 1}});
    push_payloads(c, q, "", {json(1)});
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    push_payloads(c, q, "", {json(2)});
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    EXPECT_EQ(pop(c, q).status, 204) << "the newest message is only 0.6 s old";
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    auto r = pop(c, q, "batch=10");
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.json()["messages"].size(), 2u);
}

TEST(TimeBased, MaxWaitTimeMovesStaleMessagesToTheDeadLetters) {
    auto c = client();
    auto q = unique_name("maxwait");
    configure_queue(c, q, {{"maxWaitTimeSeconds", 1}});
    push_payloads(c, q, "", {json("stale1"), json("stale2")});
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    push_payloads(c, q, "", {json("fresh")});
    auto r = pop(c, q, "batch=10");
    ASSERT_EQ(r.status, 200);
    auto msgs = r.json()["messages"];
    ASSERT_EQ(msgs.size(), 1u);
    EXPECT_EQ(msgs[0]["data"], "fresh");
    EXPECT_EQ(data_value("SELECT string_agg(payload || ':' || reason, ',' ORDER BY msg_offset) FROM "
                                "queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id WHERE q.name = '" + q + "'"),
              "\"stale1\":expired,\"stale2\":expired");
    EXPECT_EQ(stored(q), "3") << "never silently deleted: the log keeps them too";
}

}  // namespace
}  // namespace queen::test
