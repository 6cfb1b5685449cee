// Retention, dedup expiry, idle groups and partitions, run by one elected broker. Each test
// has its own cluster, so that no other broker holds the housekeeping lock.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;

const std::map<std::string, std::string> fast{{"QUEEN_HOUSEKEEPING_INTERVAL_MS", "200"}};


std::string segments(test_cluster& db, const std::string& q) {
    return db.run_sql("SELECT count(*) FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id "
                      "JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = '" + q + "'");
}

TEST(Housekeeping, RetentionSecondsDeletesWholeOldSegmentsConsumedOrNot) {
    test_cluster db;
    broker_process b(db.conninfo(), fast);
    auto c = client_of(b);
    auto q = unique_name("retention");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retentionEnabled", true}, {"retentionSeconds", 2}}}}).status, 200);
    push_payloads(c, q, "", {json("old1"), json("old2")});
    std::this_thread::sleep_for(std::chrono::milliseconds(2100));
    push_payloads(c, q, "", {json("new")});
    ASSERT_TRUE(eventually([&] { return segments(db, q) == "1"; })) << segments(db, q);
    EXPECT_EQ(db.run_sql("SELECT string_agg(payload::text, ',') FROM queen.messages WHERE queue = '" + q + "'"), "\"new\"");
    // The unconsumed old messages are gone; the cursor skips to what is left.
    auto r = pop(c, q, "batch=10");
    ASSERT_EQ(r.status, 200);
    auto msgs = r.json()["messages"];
    ASSERT_EQ(msgs.size(), 1u);
    EXPECT_EQ(msgs[0]["data"], "new");
    EXPECT_EQ(msgs[0]["offset"], 3);
}

TEST(Housekeeping, CompletedRetentionNeverDeletesWhatAGroupHasNotConsumed) {
    test_cluster db;
    broker_process b(db.conninfo(), fast);
    auto c = client_of(b);
    auto q = unique_name("completed");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retentionEnabled", true}, {"completedRetentionSeconds", 1}}}}).status, 200);
    ASSERT_EQ(pop(c, q, "consumerGroup=fast").status, 204);
    ASSERT_EQ(pop(c, q, "consumerGroup=slow").status, 204);
    push_payloads(c, q, "", {json(1), json(2)});
    auto fast_msgs = pop(c, q, "batch=10&consumerGroup=fast").json()["messages"];
    ASSERT_EQ(ack(c, fast_msgs[1], "completed", "fast")["success"], true);
    // Well past completedRetentionSeconds, with many housekeeping runs: "slow" still has them.
    std::this_thread::sleep_for(std::chrono::seconds(3));
    EXPECT_EQ(segments(db, q), "1");
    auto slow_msgs = pop(c, q, "batch=10&consumerGroup=slow").json()["messages"];
    ASSERT_EQ(slow_msgs.size(), 2u);
    ASSERT_EQ(ack(c, slow_msgs[1], "completed", "slow")["success"], true);
    EXPECT_TRUE(eventually([&] { return segments(db, q) == "0"; }));
}

TEST(Housekeeping, AnIdleGroupExpiresSoItCannotHoldRetentionBackForever) {
    test_cluster db;
    auto env = fast;
    env["QUEEN_GROUP_IDLE_SECONDS"] = "2";
    broker_process b(db.conninfo(), env);
    auto c = client_of(b);
    auto q = unique_name("idle-group");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retentionEnabled", true}, {"completedRetentionSeconds", 1}}}}).status, 200);
    ASSERT_EQ(pop(c, q, "consumerGroup=abandoned").status, 204);
    push_payloads(c, q, "", {json(1)});
    auto m = pop(c, q).json()["messages"][0];
    ASSERT_EQ(ack(c, m)["success"], true);
    EXPECT_TRUE(eventually([&] { return segments(db, q) == "0"; }))
        << "the abandoned group was dropped, then the consumed segment was deleted";
    EXPECT_EQ(db.run_sql("SELECT count(*) FROM queen.consumer_groups WHERE consumer_group = 'abandoned'"), "0");
}

TEST(Housekeeping, DedupEntriesExpireWithTheirWindowAndIdlePartitionsAreReclaimed) {
    test_cluster db;
    auto env = fast;
    env["QUEEN_PARTITION_IDLE_SECONDS"] = "2";
    broker_process b(db.conninfo(), env);
    auto c = client_of(b);
    auto q = unique_name("dedup-expiry");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"dedupWindowSeconds", 1}, {"retentionEnabled", true}, {"retentionSeconds", 1}}}}).status, 200);
    push_payloads(c, q, "lane", {json(1)});
    EXPECT_TRUE(eventually([&] {
        return db.run_sql("SELECT count(*) FROM queen.log_dedup d JOIN queen.log_partitions p ON p.id = d.partition_id "
                          "WHERE p.name = 'lane'") == "0";
    }));
    EXPECT_TRUE(eventually([&] {
        return db.run_sql("SELECT count(*) FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id "
                          "WHERE q.name = '" + q + "' AND p.name = 'lane'") == "0";
    })) << "empty and idle: reclaimed";
    // The lane comes back on its next push. Retention goes off first, so that a slow pop
    // (the suite runs sharded) cannot find the message already removed.
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"dedupWindowSeconds", 1}}}}).status, 200);
    push_payloads(c, q, "lane", {json(2)});
    EXPECT_EQ(pop(c, q, "", "lane").json()["messages"][0]["data"], 2);
}

TEST(Housekeeping, AnotherBrokerTakesOverWhenTheLeaderIsKilled) {
    test_cluster db;
    auto a = std::make_unique<broker_process>(db.conninfo(), fast);
    auto b = std::make_unique<broker_process>(db.conninfo(), fast);
    auto is_leader = [](broker_process& p) { return p.log().find("this broker is the leader") != std::string::npos; };
    ASSERT_TRUE(eventually([&] { return is_leader(*a) || is_leader(*b); }));
    bool a_leads = is_leader(*a);
    EXPECT_NE(a_leads, is_leader(*b)) << "exactly one leader";
    broker_process& survivor = a_leads ? *b : *a;
    (a_leads ? a : b)->kill9();
    ASSERT_TRUE(eventually([&] { return is_leader(survivor); })) << "takeover within seconds";
    // Housekeeping still happens.
    auto c = client_of(survivor);
    auto q = unique_name("after-failover");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retentionEnabled", true}, {"retentionSeconds", 1}}}}).status, 200);
    push_payloads(c, q, "", {json(1)});
    EXPECT_TRUE(eventually([&] { return segments(db, q) == "0"; }));
}

}  // namespace
}  // namespace queen::test

namespace queen::test {
namespace {

TEST(Housekeeping, MaxWaitTimeDeadLettersForGroupsThatDoNotPop) {
    test_cluster db;
    broker_process b(db.conninfo(), fast);
    auto c = client_of(b);
    auto q = unique_name("maxwait-idle");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"maxWaitTimeSeconds", 1}}}}).status, 200);
    ASSERT_EQ(pop(c, q, "consumerGroup=sleepy").status, 204);
    push_payloads(c, q, "", {json("a"), json("b")});
    EXPECT_TRUE(eventually([&] {
        return db.run_sql("SELECT count(*) FROM queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id WHERE "
                          "q.name = '" + q + "' AND consumer_group = 'sleepy' AND reason = 'expired'") == "2";
    }));
    EXPECT_EQ(db.run_sql("SELECT committed FROM queen.log_consumers c JOIN queen.queues q ON q.id = c.queue_id WHERE "
                         "q.name = '" + q + "' AND consumer_group = 'sleepy'"),
              "2");
    EXPECT_EQ(pop(c, q, "consumerGroup=sleepy").status, 204);
}

// maxWaitTimeSeconds on a queue nobody ever popped: its messages expire for the queue mode
// (reason expired), and the queue mode's first pop finds nothing; a later message is delivered.
TEST(Housekeeping, MaxWaitTimeExpiresMessagesOfAQueueNobodyPopped) {
    test_cluster db;
    broker_process b(db.conninfo(), fast);
    auto c = client_of(b);
    auto q = unique_name("maxwait-unpopped");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"maxWaitTimeSeconds", 1}}}}).status, 200);
    push_payloads(c, q, "", {json("a"), json("b")});
    push_payloads(c, q, "other", {json("c")});
    EXPECT_TRUE(eventually([&] {
        return db.run_sql("SELECT count(*) FROM queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id WHERE "
                          "q.name = " + quote(q) + " AND consumer_group = '__QUEUE_MODE__' AND reason = 'expired'") == "3";
    }));
    auto dlq = c.get("/api/v1/dlq?queue=" + q);
    ASSERT_EQ(dlq.status, 200) << dlq.body;
    EXPECT_EQ(dlq.json()["total"], 3) << dlq.body;
    EXPECT_EQ(pop(c, q, "batch=10").status, 204);
    push_payloads(c, q, "", {json("fresh")});
    auto fresh = pop(c, q, "batch=10");
    ASSERT_EQ(fresh.status, 200) << fresh.body;
    ASSERT_EQ(fresh.json()["messages"].size(), 1u);
    EXPECT_EQ(fresh.json()["messages"][0]["data"], "fresh");
}

}  // namespace
}  // namespace queen::test
