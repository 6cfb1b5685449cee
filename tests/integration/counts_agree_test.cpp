// The counts an operator reads in several places agree with each other and with Queen's
// meaning of them (docs/operator-routes.md, "Counts"; docs/consumer-groups.md). Each suite
// runs one broker on its own database, so that cluster-wide answers hold only its workload.
// - CountsAgree: queue `orders`, 50 messages over 5 partitions, a group pops 10 of one
//   partition (leased, not acknowledged): pending 40 and processing 10 on the queue list, the
//   queue's detail, both status routes, /api/v1/status and the overview.
// - QueenDashboardWorkload: two queues, 200 messages over 6 partitions; the group `workers`
//   pops 30 messages of one partition of `orders` and acks 25 of them in one batch, and one
//   message of `audit` goes to the dead letters: `members` 1 (the partitions `workers`
//   consumed from) beside `partitionsWithLag` 5, and the live lease handed out 30 messages
//   of which 25 are acknowledged (/api/v1/status `leases`), as Queen's dashboard shows them.
#include "test_env.hpp"

#include <gtest/gtest.h>

namespace queen::test {
namespace {

using nlohmann::json;

// A suite's own database and broker (snapshot every 200 ms), started by start() from the
// suite's SetUpTestSuite and stopped after its last test; Suite names the suite, so that
// each has its own.
template <class Suite>
class own_broker : public ::testing::Test {
protected:
    // Starts them and pushes `per_partition` messages to each of orders' partitions p0..p4.
    static http_client start(int per_partition) {
        db = new test_cluster();
        b = new broker_process(db->conninfo(), {{"QUEEN_STATS_INTERVAL_MS", "200"}});
        auto c = client_of(*b);
        for (int p = 0; p < 5; ++p) {
            std::vector<json> payloads;
            for (int i = 0; i < per_partition; ++i) payloads.push_back(json{{"p", p}, {"i", i}});
            push_payloads(c, "orders", "p" + std::to_string(p), payloads);
        }
        return c;
    }
    static void TearDownTestSuite() {
        delete b;
        delete db;
        b = nullptr;
        db = nullptr;
    }

    static inline test_cluster* db = nullptr;
    static inline broker_process* b = nullptr;
    http_client c = client_of(*b);
};

class CountsAgree : public own_broker<CountsAgree> {
protected:
    static void SetUpTestSuite() {
        auto c = start(10);
        auto popped = pop(c, "orders", "batch=10&consumerGroup=workers");
        ASSERT_EQ(popped.status, 200) << popped.body;
        ASSERT_EQ(popped.json()["messages"].size(), 10u);
    }
};

TEST_F(CountsAgree, OnePendingAndOneProcessingOnEveryRoute) {
    // The listings read the stats snapshot: wait for one taken after the pop.
    json list;
    ASSERT_TRUE(eventually([&] {
        list = get_ok(c, "/api/v1/resources/queues");
        return list["queues"].size() == 1 && list["queues"][0]["messages"]["processing"] == 10;
    })) << list.dump();
    EXPECT_EQ(list["queues"][0]["messages"], (json{{"total", 50}, {"pending", 40}, {"processing", 10}}));

    auto detail = get_ok(c, "/api/v1/resources/queues/orders");
    EXPECT_EQ(detail["totals"]["pending"], 40) << detail.dump();
    EXPECT_EQ(detail["totals"]["processing"], 10) << detail.dump();

    auto status_list = get_ok(c, "/api/v1/status/queues");
    ASSERT_EQ(status_list["queues"].size(), 1u) << status_list.dump();
    EXPECT_EQ(status_list["queues"][0]["messages"]["pending"], 40) << status_list.dump();
    EXPECT_EQ(status_list["queues"][0]["messages"]["processing"], 10) << status_list.dump();

    auto status_detail = get_ok(c, "/api/v1/status/queues/orders");
    EXPECT_EQ(status_detail["totals"]["messages"]["pending"], 40) << status_detail.dump();
    EXPECT_EQ(status_detail["totals"]["messages"]["processing"], 10) << status_detail.dump();

    auto status = get_ok(c, "/api/v1/status?queue=orders");
    EXPECT_EQ(status["messages"]["pending"], 40) << status.dump();
    EXPECT_EQ(status["messages"]["processing"], 10) << status.dump();

    // The dashboard's overview and its queues page: the overview's pending is the sum of the
    // list's.
    auto overview = get_ok(c, "/api/v1/resources/overview");
    EXPECT_EQ(overview["messages"]["pending"], 40) << overview.dump();
    EXPECT_EQ(overview["messages"]["processing"], 10) << overview.dump();
}

class QueenDashboardWorkload : public own_broker<QueenDashboardWorkload> {
protected:
    static void SetUpTestSuite() {
        auto c = start(34);
        std::vector<json> audit;
        for (int i = 0; i < 30; ++i) audit.push_back(json{{"a", i}});
        push_payloads(c, "audit", "", audit);

        auto popped = pop(c, "orders", "batch=30&consumerGroup=workers");
        ASSERT_EQ(popped.status, 200) << popped.body;
        const auto msgs = popped.json()["messages"];
        ASSERT_EQ(msgs.size(), 30u);
        json acks = json::array();
        for (std::size_t i = 0; i < 25; ++i)
            acks.push_back({{"transactionId", msgs[i]["transactionId"]}, {"partitionId", msgs[i]["partitionId"]},
                            {"leaseId", msgs[i]["leaseId"]}, {"status", "completed"}});
        auto acked = c.post("/api/v1/ack/batch", json{{"consumerGroup", "workers"}, {"acknowledgments", acks}});
        ASSERT_EQ(acked.status, 200) << acked.body;
        for (const auto& a : acked.json()) ASSERT_EQ(a["success"], true) << acked.body;
        auto audited = pop(c, "audit", "batch=1");
        ASSERT_EQ(audited.status, 200) << audited.body;
        ASSERT_EQ(ack(c, audited.json()["messages"][0], "dlq")["dlq"], true);
        partition = msgs[0]["partition"].get<std::string>();
        lease = msgs[0]["leaseId"].get<std::string>();
        rest = json::array({msgs[25], msgs[26]});
    }
    static inline std::string partition;  // the one `workers` consumed from
    static inline std::string lease;      // its live lease
    static inline json rest;              // two of the messages it has not acknowledged yet
};

TEST_F(QueenDashboardWorkload, MembersCountThePartitionsTheGroupConsumedFrom) {
    json row;
    ASSERT_TRUE(eventually([&] {
        for (const auto& g : get_ok(c, "/api/v1/consumer-groups"))
            if (g["name"] == "workers" && g["queueName"] == "orders") row = g;
        return row.is_object() && row["partitionsWithLag"] == 5;
    })) << row.dump();
    EXPECT_EQ(row["members"], 1) << row.dump();

    // The group's detail lists that partition only, though the group has a cursor on all five.
    auto detail = get_ok(c, "/api/v1/consumer-groups/workers");
    ASSERT_TRUE(detail.contains("orders")) << detail.dump();
    ASSERT_EQ(detail["orders"]["partitions"].size(), 1u) << detail.dump();
    EXPECT_EQ(detail["orders"]["partitions"][0]["partition"], partition);
    EXPECT_FALSE(detail.contains("audit")) << "workers never popped audit";
    EXPECT_EQ(sql_int(*db, "SELECT count(DISTINCT lc.partition_id) FROM queen.log_consumers lc "
                           "JOIN queen.queues q ON q.id = lc.queue_id "
                           "WHERE q.name = 'orders' AND lc.consumer_group = 'workers'"),
              5)
        << "every partition has the group's cursor";
}

TEST_F(QueenDashboardWorkload, LiveLeasesKeepTheirSizeAndCountTheirAcks) {
    auto leases = [&] { return get_ok(c, "/api/v1/status")["leases"]; };
    json l = leases();
    EXPECT_EQ(l["active"], 1) << l.dump();
    EXPECT_EQ(l["totalBatchSize"], 30) << l.dump();
    EXPECT_EQ(l["totalAcked"], 25) << l.dump();

    // An extension keeps the lease's size; two more acks count.
    auto extended = c.post("/api/v1/lease/" + lease + "/extend", json{{"seconds", 120}});
    ASSERT_EQ(extended.status, 200) << extended.body;
    for (const auto& m : rest) ASSERT_EQ(ack(c, m, "completed", "workers")["success"], true);
    l = leases();
    EXPECT_EQ(l["totalBatchSize"], 30) << l.dump();
    EXPECT_EQ(l["totalAcked"], 27) << l.dump();
    EXPECT_EQ(sql_int(*db, "SELECT lc.lease_start FROM queen.log_consumers lc JOIN queen.log_partitions p "
                           "ON p.id = lc.partition_id WHERE lc.consumer_group = 'workers' AND p.name = " +
                               quote(partition) + " ORDER BY lc.version DESC LIMIT 1"),
              0);
}

}  // namespace
}  // namespace queen::test
