// POST /api/v1/transaction: pushes and acks commit together or not at all.
#include "test_env.hpp"

#include <gtest/gtest.h>

namespace queen::test {
namespace {

using nlohmann::json;

std::string count_messages(const std::string& queue) {
    return std::to_string(data_sum("SELECT count(*) FROM queen.messages WHERE queue = '" + queue + "'"));
}

std::string committed(const std::string& queue) {
    return data_value("SELECT committed FROM queen.log_consumers c JOIN queen.queues q ON q.id = c.queue_id "
                             "WHERE q.name = '" + queue + "' AND consumer_group = '__QUEUE_MODE__'");
}

json ack_op(const json& m) {
    return {{"type", "ack"}, {"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
            {"leaseId", m["leaseId"]}, {"status", "completed"}};
}

TEST(Transaction, AckAndNextStagePushCommitTogether) {
    auto c = client();
    auto in = unique_name("stage1"), out = unique_name("stage2");
    // One entity's lane in both stages (the same partition name), as pipelines keep it: over
    // shards that is one shard, so the transaction stays one local transaction (docs/scaling.md).
    push_payloads(c, in, "order-1", {json("work")});
    auto m = pop(c, in).json()["messages"][0];
    json body{{"operations",
               json::array({ack_op(m), {{"type", "push"},
                                        {"items", {{{"queue", out}, {"partition", "order-1"}, {"payload", "next"}}}}}})},
              {"requiredLeases", json::array({m["leaseId"]})}};
    auto r = c.post("/api/v1/transaction", body);
    ASSERT_EQ(r.status, 200) << r.body;
    auto res = r.json();
    EXPECT_EQ(res["success"], true);
    EXPECT_TRUE(res["transactionId"].is_string());
    ASSERT_EQ(res["results"].size(), 2u);
    EXPECT_EQ(res["results"][0]["type"], "ack");
    EXPECT_EQ(res["results"][0]["success"], true);
    EXPECT_EQ(res["results"][1]["type"], "push");
    EXPECT_EQ(res["results"][1]["status"], "queued");
    EXPECT_EQ(committed(in), "1");
    auto next = pop(c, out).json()["messages"][0];
    EXPECT_EQ(next["data"], "next");
    EXPECT_EQ(next["id"], res["results"][1]["messageId"]);
}

TEST(Transaction, AFailingAckRollsBackEveryPushAndAck) {
    auto c = client();
    auto in = unique_name("rollback-in"), out = unique_name("rollback-out");
    push_payloads(c, in, "order-1", {json(1), json(2)});  // one lane in both queues: one shard
    auto msgs = pop(c, in, "batch=2").json()["messages"];
    json bad = ack_op(msgs[1]);
    bad["transactionId"] = "does-not-exist";
    json body{{"operations",
               json::array({ack_op(msgs[0]),
                            {{"type", "push"}, {"items", {{{"queue", out}, {"partition", "order-1"}, {"payload", 1}}}}},
                            bad})}};
    auto r = c.post("/api/v1/transaction", body);
    ASSERT_EQ(r.status, 200) << r.body;
    auto res = r.json();
    EXPECT_EQ(res["success"], false);
    EXPECT_NE(res["error"].get<std::string>().find("operation 2"), std::string::npos) << res["error"];
    EXPECT_NE(res["error"].get<std::string>().find("unresolvable"), std::string::npos) << res["error"];
    EXPECT_EQ(count_messages(out), "0") << "the push was rolled back";
    EXPECT_EQ(committed(in), "0") << "the first ack was rolled back";
    EXPECT_EQ(ack(c, msgs[1])["success"], true) << "the lease is still live and usable";
}

TEST(Transaction, DuplicatePushAndNoopAckAreNotFailures) {
    auto c = client();
    auto q = unique_name("tx-dup");
    auto pushed = c.post("/api/v1/push", json{{"items", {{{"queue", q}, {"transactionId", "once"}, {"payload", 1}}}}}).json();
    auto m = pop(c, q).json()["messages"][0];
    ASSERT_EQ(ack(c, m)["success"], true);
    json body{{"operations", json::array({ack_op(m), {{"type", "push"}, {"items", {{{"queue", q}, {"transactionId", "once"}, {"payload", 2}}}}}})}};
    auto res = c.post("/api/v1/transaction", body).json();
    EXPECT_EQ(res["success"], true) << res;
    EXPECT_EQ(res["results"][0]["noop"], true);
    EXPECT_EQ(res["results"][1]["status"], "duplicate");
    EXPECT_EQ(res["results"][1]["messageId"], pushed[0]["message_id"]);
    EXPECT_EQ(count_messages(q), "1");
}

TEST(Transaction, AlreadyCommittedAckAndLostRequiredLeaseAreFailures) {
    auto c = client();
    auto q = unique_name("tx-fail");
    push_payloads(c, q, "", {json(1)});
    auto m = pop(c, q).json()["messages"][0];
    ASSERT_EQ(ack(c, m)["success"], true);
    json nack = ack_op(m);
    nack["status"] = "failed";
    auto res = c.post("/api/v1/transaction", json{{"operations", json::array({nack})}}).json();
    EXPECT_EQ(res["success"], false);
    EXPECT_NE(res["error"].get<std::string>().find("already committed"), std::string::npos);
    auto out = unique_name("tx-lease-out");
    json lost{{"operations", json::array({{{"type", "push"}, {"items", {{{"queue", out}, {"payload", 1}}}}}})},
              {"requiredLeases", json::array({m["leaseId"]})}};
    auto res2 = c.post("/api/v1/transaction", lost).json();
    EXPECT_EQ(res2["success"], false);
    EXPECT_NE(res2["error"].get<std::string>().find("not held"), std::string::npos) << res2;
    EXPECT_EQ(count_messages(out), "0");
}

TEST(Transaction, BadBodiesAre400AndWriteNothing) {
    auto c = client();
    auto q = unique_name("tx-bad");
    const json bad[] = {
        json::object(),
        {{"operations", json::array()}},
        {{"operations", "x"}},
        {{"operations", {{{"type", "delete"}}}}},
        {{"operations", {{{"type", "push"}, {"items", {{{"queue", q}}, {{"queue", 5}}}}}}}},
        {{"operations", {{{"type", "ack"}, {"partitionId", "1"}}}}},
        {{"operations", {{{"type", "push"}, {"items", {{{"queue", q}}}}}}}, {"requiredLeases", {"nope"}}},
    };
    for (const auto& b : bad) {
        auto r = c.post("/api/v1/transaction", b);
        EXPECT_EQ(r.status, 400) << b << " -> " << r.body;
        EXPECT_TRUE(r.json()["error"].is_string());
    }
    auto r = c.post("/api/v1/transaction", bad[4]);
    EXPECT_EQ(r.json()["error"], "operations[0].items[1].queue must be a string");
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.queues WHERE name = '" + q + "'"), 0);
}

}  // namespace
}  // namespace queen::test
