// ConsumerGroups: the listing (one entry per group and queue, from the stats snapshot, with its
// state, lag and subscription), a group's detail keyed by queue, and the lagging cursors.
//
// Consumer-group administration through the real broker (docs/consumer-groups.md), each call
// checked by what the next pops deliver, and the refused calls (400, 404) checked to change
// nothing. The other ConsumerGroups tests: consumer_groups_*_test.cpp.
#include "consumer_groups_support.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

namespace queen::test {
namespace {

using namespace consumer_groups_support;
using nlohmann::json;
using namespace std::chrono_literals;

TEST_F(ConsumerGroups, ListingHasOneEntryPerGroupAndQueueFromTheSnapshot) {
    const std::string q = unique_name("cg-list"), q2 = unique_name("cg-list2");
    const std::string active = unique_name("cg-active"), idle = unique_name("cg-idle"),
                      lagging = unique_name("cg-lagging");
    push_payloads(c, q, "P1", {"a1", "a2", "a3"});
    push_payloads(c, q, "P2", {"b1", "b2"});
    push_payloads(c, q2, "", {"z1"});
    EXPECT_EQ(drain(c, q, idle).size(), 5u);
    EXPECT_EQ(drain(c, q2, idle).size(), 1u);
    auto held = pop(c, q, "batch=2&consumerGroup=" + active, "P1");
    ASSERT_EQ(held.status, 200) << held.body;
    auto one = pop(c, q, "batch=1&consumerGroup=" + lagging, "P2");
    ASSERT_EQ(one.status, 200) << one.body;
    ack_body(c, one.json(), lagging);

    // Never committed anything: Dead, whatever its lease.
    json a = listed(active, q);
    ASSERT_FALSE(a.is_null());
    EXPECT_EQ(a["topics"], json::array({q}));
    EXPECT_EQ(a["members"], 1) << "consumed from P1 only, though it has a cursor on P1 and P2";
    EXPECT_EQ(a["partitionsWithLag"], 2);
    EXPECT_EQ(a["totalLag"], 5);
    EXPECT_TRUE(a["maxTimeLag"].is_number_integer());
    EXPECT_LT(a["maxTimeLag"].get<int>(), 300);
    EXPECT_EQ(a["state"], "Dead");
    EXPECT_EQ(a["subscriptionMode"], "all");
    EXPECT_TRUE(a["subscriptionTimestamp"].is_null());
    EXPECT_TRUE(is_iso_us(a["subscriptionCreatedAt"])) << a.dump();

    // Caught up on both queues: one entry each, Stable.
    json i = listed(idle, q);
    ASSERT_FALSE(i.is_null());
    EXPECT_EQ(i["state"], "Stable");
    EXPECT_EQ(i["totalLag"], 0);
    EXPECT_EQ(i["partitionsWithLag"], 0);
    EXPECT_EQ(i["maxTimeLag"], 0);
    EXPECT_EQ(i["members"], 2) << "drained both partitions";
    json i2 = listed(idle, q2);
    ASSERT_FALSE(i2.is_null());
    EXPECT_EQ(i2["members"], 1);

    json l = listed(lagging, q);
    ASSERT_FALSE(l.is_null());
    EXPECT_EQ(l["state"], "Stable");
    EXPECT_EQ(l["totalLag"], 4);
    EXPECT_EQ(l["partitionsWithLag"], 2);

    // Its oldest waiting message ten minutes old: Lagging, and maxTimeLag says by how much.
    data_run("UPDATE queen.log_consumers c SET ready_at = now() - interval '10 minutes' FROM queen.queues q "
                      "WHERE q.id = c.queue_id AND q.name = " + quote(q) + " AND c.consumer_group = " + quote(lagging) +
                      " AND c.ready_at IS NOT NULL");
    l = listed(lagging, q);
    EXPECT_EQ(l["state"], "Lagging");
    EXPECT_GE(l["maxTimeLag"].get<int>(), 600);

    // Queue mode is listed under its reserved name, with no subscription mode.
    EXPECT_EQ(pop(c, q, "batch=1").status, 200);
    json qm = listed("__QUEUE_MODE__", q);
    ASSERT_FALSE(qm.is_null());
    EXPECT_TRUE(qm["subscriptionMode"].is_null());

    // A group subscribed from now.
    const std::string fresh = unique_name("cg-new");
    EXPECT_EQ(pop(c, q2, "consumerGroup=" + fresh + "&subscriptionMode=new").status, 204);
    json f = listed(fresh, q2);
    EXPECT_EQ(f["subscriptionMode"], "new");
    EXPECT_TRUE(is_iso_us(f["subscriptionTimestamp"]));

    // Sorted by group, then queue.
    auto all = c.get("/api/v1/consumer-groups").json();
    for (std::size_t k = 1; k < all.size(); ++k) {
        const auto prev = std::make_pair(all[k - 1]["name"].get<std::string>(), all[k - 1]["queueName"].get<std::string>());
        const auto cur = std::make_pair(all[k]["name"].get<std::string>(), all[k]["queueName"].get<std::string>());
        EXPECT_LT(prev, cur);
    }
}

TEST_F(ConsumerGroups, DetailIsKeyedByQueueAndAnUnknownGroupIsEmpty) {
    const std::string q = unique_name("cg-detail"), g = unique_name("cg-detail-group");
    push_payloads(c, q, "P1", {"a1", "a2", "a3"});
    push_payloads(c, q, "P2", {"b1", "b2"});
    auto held = pop(c, q, "batch=2&consumerGroup=" + g, "P1");
    ASSERT_EQ(held.status, 200) << held.body;
    const std::string lease = held.json()["leaseId"];

    json d = detail(g);
    ASSERT_EQ(d.size(), 1u) << d.dump();
    const json& parts = d[q]["partitions"];
    // P1 only: the group has a cursor on P2 too but has consumed nothing there (as Queen lists it).
    ASSERT_EQ(parts.size(), 1u) << d.dump();
    EXPECT_EQ(parts[0]["partition"], "P1");
    EXPECT_EQ(parts[0]["workerId"], lease);
    EXPECT_EQ(parts[0]["leaseActive"], true);
    EXPECT_EQ(parts[0]["totalConsumed"], 0);
    EXPECT_EQ(parts[0]["offsetLag"], 3);
    EXPECT_TRUE(parts[0]["timeLagSeconds"].is_number_integer());
    EXPECT_TRUE(parts[0]["lastConsumedAt"].is_null()) << "nothing committed yet";
    EXPECT_EQ(parts[0]["partitionId"], held.json()["partitionId"]);
    EXPECT_EQ(parts[0]["committedOffset"], 0);
    EXPECT_EQ(parts[0]["lastOffset"], 3);
    EXPECT_EQ(parts[0]["leaseId"], lease);
    EXPECT_EQ(parts[0]["leaseEnd"], 2);
    EXPECT_TRUE(is_iso_us(parts[0]["leaseExpiresAt"]));
    EXPECT_EQ(parts[0]["attempts"], 0);
    EXPECT_TRUE(parts[0]["retryAt"].is_null());
    EXPECT_TRUE(is_iso_us(parts[0]["oldestPendingAt"]));

    // Once it consumes from P2 too, P2 is listed.
    auto p2 = pop(c, q, "batch=1&consumerGroup=" + g, "P2");
    ASSERT_EQ(p2.status, 200) << p2.body;
    d = detail(g);
    ASSERT_EQ(d[q]["partitions"].size(), 2u) << d.dump();
    EXPECT_EQ(d[q]["partitions"][1]["partition"], "P2");
    EXPECT_EQ(d[q]["partitions"][1]["leaseActive"], true);
    EXPECT_EQ(d[q]["partitions"][1]["offsetLag"], 2);
    EXPECT_TRUE(is_iso_us(d[q]["partitions"][1]["lastClaimedAt"])) << d.dump();

    // An acknowledgement moves the cursor: lastConsumedAt and totalConsumed follow.
    ack_body(c, held.json(), g);
    d = detail(g);
    EXPECT_EQ(d[q]["partitions"][0]["totalConsumed"], 2);
    EXPECT_EQ(d[q]["partitions"][0]["offsetLag"], 1);
    EXPECT_TRUE(is_iso_us(d[q]["partitions"][0]["lastConsumedAt"])) << d.dump();
    EXPECT_EQ(d[q]["partitions"][0]["leaseActive"], false);

    auto missing = c.get("/api/v1/consumer-groups/" + url_encode(unique_name("cg-nobody")));
    EXPECT_EQ(missing.status, 200);
    EXPECT_EQ(missing.json(), json::object());
    EXPECT_EQ(c.get("/api/v1/consumer-groups/" + url_encode(g) + "/queues/" + url_encode(q)).status, 405);
}

TEST_F(ConsumerGroups, LaggingListsCursorsWhoseOldestWaitingMessageIsOlderThanTheBound) {
    const std::string q = unique_name("cg-lag"), g = unique_name("cg-lag-group");
    push_payloads(c, q, "P1", {"a1", "a2", "a3"});
    push_payloads(c, q, "P2", {"b1"});
    push_payloads(c, q, "P3", {"c1"});
    auto held = pop(c, q, "batch=1&consumerGroup=" + g, "P1");
    ASSERT_EQ(held.status, 200) << held.body;
    auto p3 = pop(c, q, "batch=10&consumerGroup=" + g, "P3");
    ASSERT_EQ(p3.status, 200) << p3.body;
    ack_body(c, p3.json(), g);
    // P1 two hours behind, P2 ninety minutes; P3 caught up.
    const std::string where = " FROM queen.log_partitions p WHERE p.id = c.partition_id AND c.consumer_group = " +
                              quote(g) + " AND p.name = ";
    data_run("UPDATE queen.log_consumers c SET ready_at = now() - interval '2 hours'" + where + "'P1'");
    data_run("UPDATE queen.log_consumers c SET ready_at = now() - interval '90 minutes'" + where + "'P2'");

    auto mine = [&](const json& rows) {
        json out = json::array();
        for (const auto& r : rows)
            if (r["consumer_group"] == g) out.push_back(r);
        return out;
    };
    auto r = c.get("/api/v1/consumer-groups/lagging");  // default: an hour
    ASSERT_EQ(r.status, 200) << r.body;
    json rows = mine(r.json());
    ASSERT_EQ(rows.size(), 2u) << r.body;
    EXPECT_EQ(rows[0]["partition_name"], "P1") << "largest lag first";
    EXPECT_EQ(rows[0]["queue_name"], q);
    EXPECT_EQ(rows[0]["partition_id"], held.json()["partitionId"]);
    EXPECT_EQ(rows[0]["worker_id"], held.json()["leaseId"]);
    EXPECT_EQ(rows[0]["offset_lag"], 3);
    EXPECT_GE(rows[0]["time_lag_seconds"].get<int>(), 7200);
    EXPECT_LT(rows[0]["time_lag_seconds"].get<int>(), 7300);
    EXPECT_DOUBLE_EQ(rows[0]["lag_hours"].get<double>(),
                     std::round(rows[0]["time_lag_seconds"].get<double>() / 36.0) / 100.0);
    EXPECT_TRUE(is_iso_us(rows[0]["oldest_unconsumed_at"]));
    EXPECT_TRUE(rows[0].contains("last_consumed_at"));
    EXPECT_EQ(rows[1]["partition_name"], "P2");
    EXPECT_EQ(rows[1]["worker_id"], nullptr);

    EXPECT_EQ(mine(c.get("/api/v1/consumer-groups/lagging?minLagSeconds=6000").json()).size(), 1u);
    EXPECT_EQ(mine(c.get("/api/v1/consumer-groups/lagging?minLagSeconds=0").json()).size(), 2u)
        << "a caught-up cursor is never lagging";
    for (const char* bad : {"abc", "-1", "1.5"}) {
        auto b = c.get(std::string("/api/v1/consumer-groups/lagging?minLagSeconds=") + bad);
        EXPECT_EQ(b.status, 400) << bad;
        EXPECT_NE(b.json()["error"].get<std::string>().find("minLagSeconds"), std::string::npos) << b.body;
    }
}

}  // namespace
}  // namespace queen::test
