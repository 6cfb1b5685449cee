// The ack algorithm of docs/http-api.md through the real broker: resolution inside the live span,
// cumulative commit, nacks, noop / already committed / unresolvable, lease release, attempts,
// and the worked cases (span 1..5, retryLimit 2).
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;

class AckRules : public ::testing::Test {
protected:
    void SetUp() override {
        queue = unique_name("ack");
        auto r = c.post("/api/v1/configure", json{{"queue", queue},
                                                  {"options", {{"retryLimit", 2}, {"retryDelay", 0}, {"leaseTime", 60}}}});
        ASSERT_EQ(r.status, 200) << r.body;
        push_payloads(c, queue, "", {json(1), json(2), json(3), json(4), json(5)});
    }

    // Pops the span 1..5 and returns its messages.
    json pop_span() {
        auto r = pop(c, queue, "batch=5");
        EXPECT_EQ(r.status, 200) << r.body;
        if (r.status != 200) return json::array();
        auto msgs = r.json()["messages"];
        EXPECT_EQ(msgs.size(), 5u);
        return msgs;
    }

    // One batch call: pairs of (offset 1..5, status).
    json ack_batch(const json& msgs, const std::vector<std::pair<int, std::string>>& signals) {
        json acks = json::array();
        for (auto& [off, st] : signals) {
            const auto& m = msgs[off - 1];
            acks.push_back({{"transactionId", m["transactionId"]},
                            {"partitionId", m["partitionId"]},
                            {"leaseId", m["leaseId"]},
                            {"status", st},
                            {"error", st == "completed" ? json() : json("boom " + std::to_string(off))}});
        }
        auto r = c.post("/api/v1/ack/batch", json{{"consumerGroup", nullptr}, {"acknowledgments", acks}});
        EXPECT_EQ(r.status, 200) << r.body;
        return r.json();
    }

    std::string cursor(const std::string& column) {
        return data_value("SELECT " + column + " FROM queen.log_consumers c JOIN queen.queues q ON q.id = "
                                 "c.queue_id WHERE q.name = '" + queue + "'");
    }
    std::string committed() { return cursor("committed"); }
    bool leased() { return cursor("lease_id IS NOT NULL") == "t"; }
    std::string dead_letters() {
        return data_value("SELECT coalesce(string_agg(msg_offset::text, ',' ORDER BY msg_offset), '') FROM "
                                 "queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id WHERE q.name = '" +
                                 queue + "'");
    }
    // Offsets of the next pop (batch 5), or empty.
    std::vector<int> next_offsets() {
        auto r = pop(c, queue, "batch=5");
        std::vector<int> out;
        if (r.status != 200) return out;
        const json body = r.json();
        for (const auto& m : body["messages"]) out.push_back(m["offset"].get<int>());
        return out;
    }

    // Pops the span that starts at offset `from` (after a redelivery).
    json pop_span_from(int from) {
        auto r = pop(c, queue, "batch=5");
        EXPECT_EQ(r.status, 200) << r.body;
        json by_offset = json::object();
        if (r.status != 200) return by_offset;
        const json body = r.json();
        for (const auto& m : body["messages"]) by_offset[std::to_string(m["offset"].get<int>())] = m;
        EXPECT_TRUE(by_offset.contains(std::to_string(from)));
        return by_offset;
    }

    // One batch call on messages keyed by offset.
    json ack_batch_offsets(const json& by_offset, const std::vector<std::pair<int, std::string>>& signals) {
        json acks = json::array();
        for (auto& [off, st] : signals) {
            const auto& m = by_offset[std::to_string(off)];
            acks.push_back({{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                            {"leaseId", m["leaseId"]}, {"status", st}, {"error", "e"}});
        }
        auto r = c.post("/api/v1/ack/batch", json{{"acknowledgments", acks}});
        EXPECT_EQ(r.status, 200) << r.body;
        return r.json();
    }

    http_client c = client();
    std::string queue;
};

TEST_F(AckRules, CompletedNackOnTwoCommitsOneAndRedeliversFromTwo) {  // c1 f2 c3 c4 c5
    auto msgs = pop_span();
    auto res = ack_batch(msgs, {{1, "completed"}, {2, "failed"}, {3, "completed"}, {4, "completed"}, {5, "completed"}});
    EXPECT_EQ(committed(), "1");
    EXPECT_EQ(cursor("attempts || '@' || attempts_offset"), "1@2");
    EXPECT_FALSE(leased());
    EXPECT_EQ(res[0]["success"], true);
    EXPECT_EQ(res[1]["success"], true);
    for (int i = 2; i < 5; ++i) {
        EXPECT_EQ(res[i]["success"], false) << "c" << i + 1 << " did not take effect";
        EXPECT_FALSE(res[i]["error"].is_null());
    }
    EXPECT_EQ(next_offsets(), (std::vector<int>{2, 3, 4, 5}));
}

TEST_F(AckRules, AllFailedOnTheThirdDeliveryDeadLettersAll) {  // f1..f5 on the 3rd delivery
    for (int delivery = 1; delivery <= 3; ++delivery) {
        auto msgs = pop_span();
        auto res = ack_batch(msgs, {{1, "failed"}, {2, "failed"}, {3, "failed"}, {4, "failed"}, {5, "failed"}});
        if (delivery < 3) {
            EXPECT_EQ(committed(), "0");
            EXPECT_EQ(dead_letters(), "");
            EXPECT_EQ(res[0]["success"], true);
            EXPECT_EQ(res[1]["success"], false) << "f2 was not reached";
        } else {
            for (auto& a : res) {
                EXPECT_EQ(a["success"], true);
                EXPECT_EQ(a["dlq"], true);
            }
        }
    }
    EXPECT_EQ(dead_letters(), "1,2,3,4,5");
    EXPECT_EQ(committed(), "5");
    EXPECT_FALSE(leased());
    EXPECT_EQ(data_value("SELECT payload || '/' || error_message || '/' || attempts FROM queen.dead_letters d "
                                "JOIN queen.queues q ON q.id = d.queue_id WHERE q.name = '" + queue +
                                "' AND msg_offset = 1"),
              "1/boom 1/3");
    EXPECT_TRUE(next_offsets().empty());
}

TEST_F(AckRules, RetryThreeThenDlqFiveStopsAtThree) {  // r3 d5
    auto msgs = pop_span();
    auto res = ack_batch(msgs, {{3, "retry"}, {5, "dlq"}});
    EXPECT_EQ(dead_letters(), "") << "5 is not dead-lettered: it was not reached";
    EXPECT_FALSE(leased());
    EXPECT_EQ(cursor("attempts"), "0") << "a retry counts no attempt";
    EXPECT_EQ(res[0]["success"], true);
    EXPECT_EQ(res[1]["success"], false);
    EXPECT_EQ(next_offsets(), (std::vector<int>{3, 4, 5}));
}

TEST_F(AckRules, DlqOneRetryTwo) {  // d1 r2
    auto msgs = pop_span();
    auto res = ack_batch(msgs, {{1, "dlq"}, {2, "retry"}});
    EXPECT_EQ(dead_letters(), "1");
    EXPECT_EQ(committed(), "1");
    EXPECT_FALSE(leased());
    EXPECT_EQ(res[0]["dlq"], true);
    EXPECT_EQ(next_offsets(), (std::vector<int>{2, 3, 4, 5}));
}

TEST_F(AckRules, LoneDlqKeepsTheLease) {  // d1
    auto msgs = pop_span();
    auto res = ack_batch(msgs, {{1, "dlq"}});
    EXPECT_EQ(dead_letters(), "1");
    EXPECT_EQ(committed(), "1");
    EXPECT_TRUE(leased()) << "the consumer keeps 2..5";
    EXPECT_EQ(res[0]["leaseReleased"], false);
    EXPECT_TRUE(next_offsets().empty());
    // The rest of the span is still acknowledgeable under the same lease.
    auto done = ack_batch(msgs, {{5, "completed"}});
    EXPECT_EQ(done[0]["success"], true);
    EXPECT_EQ(committed(), "5");
    EXPECT_FALSE(leased());
}

TEST_F(AckRules, CompletedFiveThenFailedThreeIsAlreadyCommitted) {  // c5 then f3
    auto msgs = pop_span();
    auto first = ack_batch(msgs, {{5, "completed"}});
    EXPECT_EQ(first[0]["success"], true);
    EXPECT_EQ(first[0]["leaseReleased"], true);
    EXPECT_EQ(committed(), "5");
    auto second = ack_batch(msgs, {{3, "failed"}});
    EXPECT_EQ(second[0]["success"], false);
    EXPECT_EQ(second[0]["error"], "already committed");
    auto noop = ack_batch(msgs, {{4, "completed"}});
    EXPECT_EQ(noop[0]["success"], true);
    EXPECT_EQ(noop[0]["noop"], true);
    EXPECT_EQ(committed(), "5");
}

TEST_F(AckRules, FailedThreeThenCompletedFourIsUnresolvable) {  // f3 then c4
    auto msgs = pop_span();
    auto first = ack_batch(msgs, {{3, "failed"}});
    EXPECT_EQ(first[0]["success"], true);
    EXPECT_EQ(committed(), "2");
    EXPECT_FALSE(leased());
    auto second = ack_batch(msgs, {{4, "completed"}});
    EXPECT_EQ(second[0]["success"], false);
    EXPECT_EQ(second[0]["error"], "unresolvable");
    EXPECT_EQ(committed(), "2") << "a late ack can never skip a message";
}

TEST_F(AckRules, StrongestSignalWinsAtOneOffset) {  // dlq > failed > retry > completed
    auto msgs = pop_span();
    auto res = ack_batch(msgs, {{2, "retry"}, {2, "failed"}, {2, "completed"}});
    EXPECT_EQ(cursor("attempts || '@' || attempts_offset"), "1@2") << "failed beats retry: one attempt counted";
    EXPECT_EQ(committed(), "1");
    EXPECT_EQ(res[1]["success"], true) << "the failed signal took effect";
    EXPECT_EQ(res[0]["success"], false);
    EXPECT_EQ(res[2]["success"], false);
    auto again = pop_span_from(2);
    auto res2 = ack_batch_offsets(again, {{2, "failed"}, {2, "dlq"}});
    EXPECT_EQ(dead_letters(), "2") << "dlq beats failed";
    EXPECT_EQ(committed(), "2");
}

TEST_F(AckRules, RetriedNackCostsNothing) {
    auto msgs = pop_span();
    ack_batch(msgs, {{1, "failed"}});
    auto again = ack_batch(msgs, {{1, "failed"}});
    EXPECT_EQ(again[0]["error"], "unresolvable");
    EXPECT_EQ(cursor("attempts || '@' || attempts_offset"), "1@1") << "one attempt per lease";
}

TEST_F(AckRules, CumulativeCommitAndSpanEndRelease) {
    auto msgs = pop_span();
    auto res = ack_batch(msgs, {{3, "completed"}});
    EXPECT_EQ(res[0]["success"], true);
    EXPECT_EQ(committed(), "3") << "acking 3 completes 1..3";
    EXPECT_TRUE(leased());
    EXPECT_EQ(res[0]["leaseReleased"], false);
    res = ack_batch(msgs, {{5, "completed"}});
    EXPECT_FALSE(leased()) << "released when the cursor reaches the span end";
    EXPECT_EQ(res[0]["leaseReleased"], true);
}

TEST_F(AckRules, AcksOutsideTheLiveSpanAreUnresolvableAndChangeNothing) {
    auto r = pop(c, queue, "batch=2");  // span 1..2
    auto msgs = r.json()["messages"];
    // Another consumer's lease id: unresolvable.
    json wrong = msgs[0];
    wrong["leaseId"] = "00000000-0000-4000-8000-000000000000";
    EXPECT_EQ(ack(c, wrong)["error"], "unresolvable");
    // A message beyond the span (offset 4) by its transaction id: unresolvable.
    auto all = data_value("SELECT transaction_id FROM queen.messages WHERE queue = '" + queue +
                                 "' AND \"offset\" = 4");
    auto beyond = c.post("/api/v1/ack", json{{"transactionId", all}, {"partitionId", msgs[0]["partitionId"]}}).json();
    EXPECT_EQ(beyond["error"], "unresolvable");
    // Unknown transaction id and unknown partition id: unresolvable.
    EXPECT_EQ(c.post("/api/v1/ack", json{{"transactionId", "nope"}, {"partitionId", msgs[0]["partitionId"]}})
                  .json()["error"],
              "unresolvable");
    EXPECT_EQ(c.post("/api/v1/ack", json{{"transactionId", "nope"}, {"partitionId", "999999999"}}).json()["error"],
              "unresolvable");
    EXPECT_EQ(committed(), "0");
    EXPECT_TRUE(leased());
    // The explicit offset (as pops return it) resolves too.
    auto by_offset = c.post("/api/v1/ack", json{{"transactionId", msgs[1]["transactionId"]},
                                                {"partitionId", msgs[1]["partitionId"]},
                                                {"offset", 2}});
    EXPECT_EQ(by_offset.json()["success"], true);
    EXPECT_EQ(committed(), "2");
}

TEST_F(AckRules, FailedRespectsRetryDelay) {
    auto r = c.post("/api/v1/configure", json{{"queue", queue}, {"options", {{"retryLimit", 2}, {"retryDelay", 1500}}}});
    ASSERT_EQ(r.status, 200);
    auto msgs = pop_span();
    ack_batch(msgs, {{1, "failed"}});
    EXPECT_TRUE(next_offsets().empty()) << "not redelivered before retryDelay";
    std::this_thread::sleep_for(std::chrono::milliseconds(1700));
    EXPECT_EQ(next_offsets(), (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST_F(AckRules, LeaseExpiriesExhaustTheBudgetIntoTheDeadLetterTable) {
    auto r = c.post("/api/v1/configure", json{{"queue", queue}, {"options", {{"retryLimit", 1}, {"leaseTime", 1}}}});
    ASSERT_EQ(r.status, 200);
    // Two deliveries of head 1 expire: the third claim dead-letters it (retryLimit 1 = 2 deliveries).
    for (int i = 0; i < 2; ++i) {
        ASSERT_EQ(pop(c, queue, "batch=1").status, 200);
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    }
    auto next = next_offsets();
    EXPECT_EQ(dead_letters(), "1");
    EXPECT_EQ(next, (std::vector<int>{2, 3, 4, 5}));
    EXPECT_EQ(data_value("SELECT reason FROM queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id "
                                "WHERE q.name = '" + queue + "'"),
              "lease_expired");
}

}  // namespace
}  // namespace queen::test
