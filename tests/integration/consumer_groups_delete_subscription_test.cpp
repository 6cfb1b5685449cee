// ConsumerGroups: delete on one queue and everywhere, with and without the metadata (the
// recorded start), of an unknown group; the subscription rewrite, used when the group restarts,
// and the refused rewrites.
//
// Consumer-group administration through the real broker (docs/consumer-groups.md), each call
// checked by what the next pops deliver, and the refused calls (400, 404) checked to change
// nothing. The other ConsumerGroups tests: consumer_groups_*_test.cpp.
#include "consumer_groups_support.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <string>

namespace queen::test {
namespace {

using namespace consumer_groups_support;
using nlohmann::json;
using namespace std::chrono_literals;

// ---------------------------------------------------------------- delete

TEST_F(ConsumerGroups, DeleteOnOneQueueRestartsItFromTheBeginning) {
    const std::string q1 = unique_name("cg-del-q1"), q2 = unique_name("cg-del-q2"), g = unique_name("cg-g");
    push_payloads(c, q1, "P1", {"a1", "a2", "a3"});
    push_payloads(c, q1, "P2", {"b1"});
    push_payloads(c, q2, "", {"z1"});
    EXPECT_EQ(drain(c, q1, g).size(), 4u);
    EXPECT_EQ(drain(c, q2, g).size(), 1u);

    auto r = del(g, q1, "deleteMetadata=false");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"deletedPartitions", 2},
                              {"metadataDeleted", false}, {"queueName", q1}}));
    EXPECT_EQ(cursors(q1, g), "P1=0,P2=0");
    EXPECT_EQ(sorted(drain(c, q1, g)), (names{"a1", "a2", "a3", "b1"}));
    EXPECT_EQ(pop(c, q2, group_query(g)).status, 204);  // the other queue is untouched
}

TEST_F(ConsumerGroups, DeleteKeepsTheRecordedStartUnlessMetadataIsDeleted) {
    const std::string q = unique_name("cg-del-start"), g = unique_name("cg-g");
    push_payloads(c, q, "", {"old1", "old2"});
    EXPECT_EQ(pop(c, q, group_query(g, "subscriptionFrom=now")).status, 204);  // records the start
    const std::string start = subscription_of(q, g);
    push_payloads(c, q, "", {"new1", "new2"});
    EXPECT_EQ(drain(c, q, g), (names{"new1", "new2"}));

    // With deleteMetadata=false: the start stays; the group consumes again from it.
    auto r = del(g, "", "deleteMetadata=false");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"deletedPartitions", 1},
                              {"metadataDeleted", false}}));
    EXPECT_EQ(subscription_of(q, g), start);
    EXPECT_EQ(drain(c, q, g), (names{"new1", "new2"}));

    // Without the parameter (as with true): the group is forgotten; its next pop records a new start.
    r = del(g);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"deletedPartitions", 1},
                              {"metadataDeleted", true}}));
    EXPECT_EQ(detail(g), json::object());
    EXPECT_EQ(cursors(q, g), "");
    EXPECT_EQ(pop(c, q, group_query(g, "subscriptionMode=new")).status, 204);
    push_payloads(c, q, "", {"new3"});
    EXPECT_EQ(drain(c, q, g, "subscriptionMode=new"), names{"new3"});

    // And with deleteMetadata=1 once more, a group starting from the beginning gets everything.
    r = del(g, q, "deleteMetadata=1");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["metadataDeleted"], true);
    EXPECT_EQ(drain(c, q, g), (names{"old1", "old2", "new1", "new2", "new3"}));
}

TEST_F(ConsumerGroups, DeleteEverywhereReleasesLeasesAndReplaysEveryQueue) {
    const std::string q1 = unique_name("cg-del-all1"), q2 = unique_name("cg-del-all2"), g = unique_name("cg-g");
    push_payloads(c, q1, "P1", {"a1", "a2"});
    push_payloads(c, q1, "P2", {"b1"});
    push_payloads(c, q2, "", {"z1", "z2"});
    EXPECT_EQ(drain(c, q1, g).size(), 3u);
    auto held = pop(c, q2, group_query(g));
    ASSERT_EQ(held.status, 200) << held.body;
    const json msgs = held.json()["messages"];

    auto r = del(g, "", "deleteMetadata=true");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["deletedPartitions"], 3);
    EXPECT_EQ(r.json()["metadataDeleted"], true);
    // The lease went with the cursor: the late ack is unresolvable and changes nothing.
    json late = ack(c, msgs[0], "completed", g);
    EXPECT_EQ(late["success"], false);
    EXPECT_EQ(late["error"], "unresolvable");
    auto ext = c.post("/api/v1/lease/" + msgs[0]["leaseId"].get<std::string>() + "/extend", std::string("{}"));
    EXPECT_EQ(ext.json()[0]["error"], "Lease not found");
    EXPECT_EQ(sorted(drain(c, q1, g)), (names{"a1", "a2", "b1"}));
    EXPECT_EQ(drain(c, q2, g), (names{"z1", "z2"}));
}

TEST_F(ConsumerGroups, DeletingAnUnknownGroupIsAnIdempotentSuccess) {
    const std::string g = unique_name("cg-nobody");
    for (int i = 0; i < 2; ++i) {
        auto r = del(g, "", "deleteMetadata=true");
        ASSERT_EQ(r.status, 200) << r.body;
        EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"deletedPartitions", 0},
                                  {"metadataDeleted", false}}));
    }
    EXPECT_EQ(del(g, "no-such-queue").status, 200);
}

// ---------------------------------------------------------------- subscription

TEST_F(ConsumerGroups, SubscriptionRewriteIsUsedWhenTheGroupRestarts) {
    const std::string q = unique_name("cg-sub"), q2 = unique_name("cg-sub2"), g = unique_name("cg-g");
    push_payloads(c, q, "", {"a1", "a2"});
    push_payloads(c, q2, "", {"y1"});
    const std::string t = instant_between();
    push_payloads(c, q, "", {"b1", "b2"});
    push_payloads(c, q2, "", {"y2"});
    EXPECT_EQ(drain(c, q, g).size(), 4u);
    EXPECT_EQ(drain(c, q2, g).size(), 2u);

    auto r = subscription(g, json{{"subscriptionTimestamp", t}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"newTimestamp", t}, {"rowsUpdated", 2}}));
    EXPECT_EQ(subscription_of(q, g), t);
    EXPECT_EQ(subscription_of(q2, g), t);
    EXPECT_EQ(listed(g, q)["subscriptionTimestamp"], t);
    EXPECT_EQ(pop(c, q, group_query(g)).status, 204);  // cursors do not move

    ASSERT_EQ(del(g, q, "deleteMetadata=false").status, 200);
    EXPECT_EQ(drain(c, q, g), (names{"b1", "b2"}));
    ASSERT_EQ(del(g, q2, "deleteMetadata=false").status, 200);
    EXPECT_EQ(drain(c, q2, g), (names{"y2"}));

    // A start in the future is taken as now.
    r = subscription(g, R"({"subscriptionTimestamp":"2999-01-01T00:00:00Z"})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_LT(r.json()["newTimestamp"].get<std::string>(), "2999");
    EXPECT_GE(r.json()["newTimestamp"].get<std::string>(), t);
}

TEST_F(ConsumerGroups, RefusedSubscriptionRewritesAre400AndChangeNothing) {
    const std::string q = unique_name("cg-sub-bad"), g = unique_name("cg-g");
    push_payloads(c, q, "", {"m1"});
    EXPECT_EQ(drain(c, q, g).size(), 1u);
    const std::string before = subscription_of(q, g);
    ASSERT_EQ(before, "beginning");
    for (const std::string body : {"", "{}", R"({"subscriptionTimestamp":null})", R"({"subscriptionTimestamp":"soon"})",
                                   R"({"subscriptionTimestamp":123})", R"({"subscriptionTimestamp":true})",
                                   R"({"subscriptionTimestamp":"2026-13-01T00:00:00Z"})", "{bad", "[]"}) {
        auto r = subscription(g, body);
        EXPECT_EQ(r.status, 400) << "body '" << body << "': " << r.body;
        EXPECT_TRUE(r.json()["error"].is_string()) << r.body;
    }
    EXPECT_EQ(subscription(g, "{}").json(), json::parse(R"({"error":"Missing subscriptionTimestamp in request body"})"));
    // An unknown group: nothing to rewrite, which is not an error.
    const std::string nobody = unique_name("cg-nobody");
    auto unknown = subscription(nobody, R"({"subscriptionTimestamp":"2026-01-01T00:00:00Z"})");
    EXPECT_EQ(unknown.status, 200) << unknown.body;
    EXPECT_EQ(unknown.json()["rowsUpdated"], 0);
    EXPECT_EQ(unknown.json()["consumerGroup"], nobody);
    EXPECT_EQ(subscription_of(q, g), before);
}

}  // namespace
}  // namespace queen::test
