// ConsumerGroups: seek to the end, to a time stamp (backwards = replay), under a live lease, with
// retries pending, and of one partition; refused seeks (400, 404) change nothing.
//
// Consumer-group administration through the real broker (docs/consumer-groups.md), each call
// checked by what the next pops deliver, and the refused calls (400, 404) checked to change
// nothing. The other ConsumerGroups tests: consumer_groups_*_test.cpp.
#include "consumer_groups_support.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace queen::test {
namespace {

using namespace consumer_groups_support;
using nlohmann::json;
using namespace std::chrono_literals;

TEST_F(ConsumerGroups, SeekToEndDeliversNothingOldAndReleasesTheLease) {
    const std::string q = unique_name("cg-seek-end"), g = unique_name("cg-g"), other = unique_name("cg-other");
    push_payloads(c, q, "P1", {"a1", "a2", "a3"});
    push_payloads(c, q, "P2", {"b1", "b2"});
    auto held = pop(c, q, "batch=1&consumerGroup=" + g, "P1");
    ASSERT_EQ(held.status, 200) << held.body;
    const json msg = held.json()["messages"][0];

    auto r = seek(g, q, R"({"toEnd":true})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"queueName", q}, {"seekToEnd", true},
                              {"targetTimestamp", nullptr}, {"partitionsUpdated", 2}}));
    EXPECT_EQ(cursors(q, g), "P1=3,P2=2");
    EXPECT_EQ(pop(c, q, group_query(g)).status, 204);
    // The released lease: it cannot be extended; an ack of a message now below the cursor
    // is the ack rules' noop.
    auto ext = c.post("/api/v1/lease/" + msg["leaseId"].get<std::string>() + "/extend", std::string("{}"));
    EXPECT_EQ(ext.json()[0]["error"], "Lease not found");
    json late = ack(c, msg, "completed", g);
    EXPECT_EQ(late["success"], true);
    EXPECT_EQ(late["noop"], true);

    push_payloads(c, q, "P2", {"b3"});
    EXPECT_EQ(drain(c, q, g), names{"b3"});
    EXPECT_EQ(sorted(drain(c, q, other)), (names{"a1", "a2", "a3", "b1", "b2", "b3"}));  // other groups unaffected
}

TEST_F(ConsumerGroups, SeekToTimestampReplaysFromThere) {
    const std::string q = unique_name("cg-seek-time"), g = unique_name("cg-g");
    auto first = c.post("/api/v1/push", json{{"items", json::array({{{"queue", q}, {"partition", "P1"}, {"payload", "a1"}},
                                                                    {{"queue", q}, {"partition", "P1"}, {"payload", "a2"}},
                                                                    {{"queue", q}, {"partition", "P2"}, {"payload", "x1"}}})}});
    ASSERT_EQ(first.status, 201) << first.body;
    const std::string t = instant_between();
    push_payloads(c, q, "P1", {"a3"});
    push_payloads(c, q, "P2", {"x2"});
    EXPECT_EQ(sorted(drain(c, q, g)), (names{"a1", "a2", "a3", "x1", "x2"}));
    EXPECT_EQ(pop(c, q, group_query(g)).status, 204);

    // Backwards to t: everything after t again.
    auto r = seek(g, q, json{{"timestamp", t}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"queueName", q}, {"seekToEnd", false},
                              {"targetTimestamp", t}, {"partitionsUpdated", 2}}));
    EXPECT_EQ(cursors(q, g), "P1=2,P2=1");
    EXPECT_EQ(sorted(drain(c, q, g)), (names{"a3", "x2"}));

    // Before everything: a full replay, in order per partition.
    ASSERT_EQ(seek(g, q, R"({"timestamp":"2000-01-01T00:00:00Z"})").status, 200);
    auto all = drain(c, q, g);
    EXPECT_EQ(sorted(all), (names{"a1", "a2", "a3", "x1", "x2"}));
    std::vector<std::string> p1;
    for (const auto& s : all)
        if (s[0] == 'a') p1.push_back(s);
    EXPECT_EQ(p1, (names{"a1", "a2", "a3"}));

    // Exactly the createdAt of the first push: its messages count as at-or-before. (Over shards
    // a push's partitions on two shard databases get each database's time: the later one.)
    ASSERT_EQ(seek(g, q, R"({"timestamp":"2000-01-01T00:00:00Z"})").status, 200);
    auto r1 = pop(c, q, "batch=1&consumerGroup=" + g, "P1");
    ASSERT_EQ(r1.status, 200) << r1.body;
    auto r2 = pop(c, q, "batch=1&consumerGroup=" + g, "P2");
    ASSERT_EQ(r2.status, 200) << r2.body;
    const std::string created = std::max(r1.json()["messages"][0]["createdAt"].get<std::string>(),
                                         r2.json()["messages"][0]["createdAt"].get<std::string>());
    ASSERT_EQ(seek(g, q, json{{"timestamp", created}}.dump()).status, 200);
    EXPECT_EQ(cursors(q, g), "P1=2,P2=1");
    EXPECT_EQ(sorted(drain(c, q, g)), (names{"a3", "x2"}));

    // A time stamp with an offset means the same instant.
    ASSERT_EQ(seek(g, q, R"({"timestamp":"2000-01-01T02:00:00+02:00"})").status, 200);
    EXPECT_EQ(cursors(q, g), "P1=0,P2=0");
}

TEST_F(ConsumerGroups, SeekBackwardsUnderALiveLeaseReleasesIt) {
    const std::string q = unique_name("cg-seek-lease"), g = unique_name("cg-g");
    push_payloads(c, q, "", {"m1", "m2", "m3"});
    auto held = pop(c, q, group_query(g));
    ASSERT_EQ(held.status, 200) << held.body;
    const json msgs = held.json()["messages"];
    ASSERT_EQ(msgs.size(), 3u);
    ASSERT_EQ(seek(g, q, R"({"timestamp":"2000-01-01T00:00:00Z"})").status, 200);
    EXPECT_EQ(cursors(q, g), "Default=0");
    json late = ack(c, msgs[1], "completed", g);
    EXPECT_EQ(late["success"], false);
    EXPECT_EQ(late["error"], "unresolvable");
    EXPECT_EQ(cursors(q, g), "Default=0");
    EXPECT_EQ(drain(c, q, g), (names{"m1", "m2", "m3"}));
}

TEST_F(ConsumerGroups, SeekResetsAttemptsAndRetryDelay) {
    const std::string q = unique_name("cg-seek-retry"), g = unique_name("cg-g");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retryDelay", 600000}}}}).status, 200);
    push_payloads(c, q, "", {"m1", "m2"});
    auto held = pop(c, q, group_query(g));
    ASSERT_EQ(held.status, 200) << held.body;
    json nack = ack(c, held.json()["messages"][0], "failed", g);
    EXPECT_EQ(nack["success"], true) << nack.dump();
    EXPECT_EQ(pop(c, q, group_query(g)).status, 204);  // retry delay
    EXPECT_EQ(cursors(q, g), "Default=0/attempts/retry");
    json part = detail(g)[q]["partitions"][0];
    EXPECT_EQ(part["attempts"], 1);
    EXPECT_TRUE(is_iso_us(part["retryAt"]));

    ASSERT_EQ(seek(g, q, R"({"timestamp":"2000-01-01T00:00:00Z"})").status, 200);
    EXPECT_EQ(cursors(q, g), "Default=0");
    part = detail(g)[q]["partitions"][0];
    EXPECT_EQ(part["attempts"], 0);
    EXPECT_TRUE(part["retryAt"].is_null());
    EXPECT_EQ(drain(c, q, g), (names{"m1", "m2"}));
}

TEST_F(ConsumerGroups, RefusedSeeksAre400Or404AndChangeNothing) {
    const std::string q = unique_name("cg-seek-bad"), g = unique_name("cg-g");
    push_payloads(c, q, "", {"m1", "m2", "m3"});
    auto held = pop(c, q, "batch=1&consumerGroup=" + g);
    ASSERT_EQ(held.status, 200) << held.body;
    const std::string before = cursors(q, g);
    ASSERT_EQ(before, "Default=0/leased");
    for (const std::string body :
         {"", "{}", "null", R"({"toEnd":false})", R"({"toEnd":null,"timestamp":null})", R"({"toEnd":"yes"})",
          R"({"toEnd":1})", R"({"timestamp":"yesterday"})", R"({"timestamp":5})", R"({"timestamp":"2026-02-30T00:00:00Z"})",
          R"({"timestamp":"2026-01-01T25:00:00Z"})", R"({"toEnd":true,"timestamp":"2026-01-01T00:00:00Z"})",
          "{bad json", "[1]"}) {
        auto r = seek(g, q, body);
        EXPECT_EQ(r.status, 400) << "body '" << body << "': " << r.body;
        EXPECT_TRUE(r.json()["error"].is_string()) << r.body;
    }
    auto no_queue = seek(g, unique_name("cg-no-queue"), R"({"toEnd":true})");
    EXPECT_EQ(no_queue.status, 404);
    EXPECT_EQ(no_queue.json(), json::parse(R"({"error":"Queue not found"})"));
    auto no_group = seek(unique_name("cg-nobody"), q, R"({"toEnd":true})");
    EXPECT_EQ(no_group.status, 404);
    EXPECT_EQ(no_group.json(), json::parse(R"({"error":"Consumer group not found"})"));
    auto no_partition = seek_partition(g, q, "Nope");
    EXPECT_EQ(no_partition.status, 404);
    EXPECT_EQ(no_partition.json(), json::parse(R"({"error":"Partition not found"})"));
    auto nobody = seek_partition(unique_name("cg-nobody"), q, "Default");
    EXPECT_EQ(nobody.status, 200) << nobody.body;
    EXPECT_EQ(nobody.json()["updated"], false);
    EXPECT_EQ(nobody.json()["cursorMovedTo"], nullptr);

    EXPECT_EQ(cursors(q, g), before);
    // The lease survived every refused call: the consumer's ack still commits.
    json a = ack(c, held.json()["messages"][0], "completed", g);
    EXPECT_EQ(a["success"], true) << a.dump();
    EXPECT_EQ(drain(c, q, g), (names{"m2", "m3"}));
}

TEST_F(ConsumerGroups, PartitionSeekMovesOnlyThatPartitionToItsEnd) {
    const std::string q = unique_name("cg-seek-part"), g = unique_name("cg-g");
    push_payloads(c, q, "P1", {"a1", "a2"});
    push_payloads(c, q, "P2", {"b1"});
    auto held = pop(c, q, "batch=1&consumerGroup=" + g, "P1");
    ASSERT_EQ(held.status, 200) << held.body;
    auto r = seek_partition(g, q, "P1");
    ASSERT_EQ(r.status, 200) << r.body;
    const json moved = r.json();
    EXPECT_EQ(moved["success"], true);
    EXPECT_EQ(moved["consumerGroup"], g);
    EXPECT_EQ(moved["queueName"], q);
    EXPECT_EQ(moved["partitionName"], "P1");
    EXPECT_EQ(moved["updated"], true);
    EXPECT_TRUE(is_iso_us(moved["cursorMovedTo"])) << moved.dump();
    EXPECT_EQ(moved["partitionsUpdated"], 1);
    EXPECT_EQ(cursors(q, g), "P1=2,P2=0");
    // An empty partition: nothing to move to.
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}}).status, 200);
    auto empty = seek_partition(g, q, "Default");
    ASSERT_EQ(empty.status, 200) << empty.body;
    EXPECT_EQ(empty.json()["updated"], false);
    EXPECT_EQ(empty.json()["cursorMovedTo"], nullptr);
    EXPECT_EQ(drain(c, q, g), names{"b1"});
    push_payloads(c, q, "P1", {"a3"});
    EXPECT_EQ(drain(c, q, g), names{"a3"});
}

}  // namespace
}  // namespace queen::test
