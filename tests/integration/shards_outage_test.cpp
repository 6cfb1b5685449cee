// A shard database that cannot be reached (its cluster killed with SIGKILL, as pg_ctl stop -m
// immediate) while the others serve: what pushes, pops and lease extensions of the databases
// still up get, and that nothing is lost or doubled once it is back (docs/scaling.md). Run
// with the sharded deployment's tests (scripts/run-tests.sh).
#include "sharded_deployment.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

using nlohmann::json;

// A cluster holding two of the four shards is killed (SIGKILL, as pg_ctl stop -m immediate)
// while a producer pushes: the pushes that reach it answer 503 naming the shard, the producer
// retries each with the same transaction ids until it is stored, and in the end every message
// is stored exactly once, on a queue without a dedup window.
TEST(Shards, AShardKilledMidPushGives503AndRetriesStoreEachMessageOnce) {
    constexpr int batches = 60, per_batch = 50, lanes = 200;
    sharded_deployment d;
    ASSERT_NO_THROW(d.init());
    broker_process broker(d.a.conninfo());
    auto admin = client_of(broker);
    ASSERT_EQ(admin.post("/api/v1/configure", json{{"queue", "kill"}, {"options", {{"dedupWindowSeconds", 0}}}})
                  .status,
              200);

    std::atomic<int> stored_batches{0}, unavailable{0}, other_failures{0}, recognised{0};
    std::string unavailable_body;
    std::thread producer([&] {
        http_client c("127.0.0.1", broker.port());
        for (int b = 0; b < batches; ++b) {
            json items = json::array();
            for (int i = 0; i < per_batch; ++i) {
                const int n = b * per_batch + i;
                items.push_back({{"queue", "kill"}, {"partition", "lane" + std::to_string(n % lanes)},
                                 {"transactionId", "k-" + std::to_string(n)}, {"payload", {{"n", n}}}});
            }
            for (int attempt = 0; attempt < 600; ++attempt) {
                auto r = c.post("/api/v1/push", json{{"items", items}});
                if (r.status == 201) {
                    ++stored_batches;
                    // Items the shards that stayed up stored on an attempt that failed elsewhere.
                    const json answers = json::parse(r.body);
                    for (const auto& a : answers)
                        if (a["status"] == "duplicate") ++recognised;
                    break;
                }
                if (r.status == 503) {
                    if (unavailable++ == 0) unavailable_body = r.body;
                } else {
                    ++other_failures;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        }
    });
    while (stored_batches < 10) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    d.b.kill_postmaster();
    std::this_thread::sleep_for(std::chrono::seconds(2));
    d.b.start();
    producer.join();

    EXPECT_EQ(stored_batches, batches);
    EXPECT_GT(unavailable.load(), 0) << "no push met the killed shards";
    EXPECT_EQ(other_failures.load(), 0);
    EXPECT_GT(recognised.load(), 0) << "no retry met items stored by its failed attempt";
    EXPECT_NE(unavailable_body.find("is unavailable"), std::string::npos) << unavailable_body;
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.messages WHERE queue = 'kill'"), batches * per_batch);
    EXPECT_EQ(d.sum_on_shards("SELECT count(DISTINCT transaction_id) FROM queen.messages WHERE queue = 'kill'"),
              batches * per_batch);
}

// With the second cluster down, queue-wide pops of a group registered before go on with the
// first cluster's messages (the proxy asks each database on its own when one cannot answer,
// and a registration's refresh does not need every database); a group never registered waits
// (503) until every database can register it. Once the cluster is back, the rest is served:
// every message once.
TEST(Shards, QueueWidePopsServeTheReachableDatabasesWhileOneIsDown) {
    constexpr int lanes = 40;
    sharded_deployment d;
    ASSERT_NO_THROW(d.init());
    broker_process broker(d.a.conninfo());
    auto c = client_of(broker);
    configure_queue(c, "down");
    json items = json::array();
    for (int p = 0; p < lanes; ++p)
        items.push_back({{"queue", "down"}, {"partition", "lane" + std::to_string(p)}, {"payload", p}});
    ASSERT_EQ(c.post("/api/v1/push", json{{"items", items}}).status, 201);
    // The lanes the first cluster's databases hold.
    const std::string lanes_here = "SELECT p.name FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id "
                                   "WHERE q.name = 'down' AND p.name LIKE 'lane%'";
    std::vector<std::string> first_lanes = d.rows_on_shard(0, lanes_here);
    for (const auto& lane : d.rows_on_shard(1, lanes_here)) first_lanes.push_back(lane);
    ASSERT_FALSE(first_lanes.empty());
    ASSERT_LT(static_cast<int>(first_lanes.size()), lanes);

    std::set<int> delivered;
    auto pop_one = [&](const std::string& group) {
        auto r = c.get("/api/v1/pop/queue/down?batch=1&consumerGroup=" + group);
        if (r.status == 200) {
            const json m = json::parse(r.body)["messages"][0];
            EXPECT_TRUE(delivered.insert(m["data"].get<int>()).second) << "delivered twice: " << r.body;
            EXPECT_EQ(ack(c, m, "completed", group)["success"], true);
        }
        return r.status;
    };
    ASSERT_EQ(pop_one("g"), 200) << "the group's first pop registers it everywhere";

    d.b.kill_postmaster();
    // A proxy connection keeps the order it last asked for up to a second (queen_proxy.ready_order):
    // a pop meeting the killed databases in it answers 503 meanwhile.
    int status = 0;
    ASSERT_TRUE(eventually([&] { return (status = pop_one("g")) != 503; }));
    while (status == 200) status = pop_one("g");
    EXPECT_EQ(status, 204) << "with the first cluster's messages taken, the queue looks empty";
    for (const auto& lane : first_lanes)
        EXPECT_TRUE(delivered.count(std::stoi(lane.substr(4)))) << lane << " (first cluster) was served while down";
    EXPECT_EQ(c.get("/api/v1/pop/queue/down?batch=1&consumerGroup=newcomer").status, 503)
        << "a group never registered waits for every database";
    d.b.start();

    ASSERT_TRUE(eventually([&] {
        while (pop_one("g") == 200) {
        }
        return static_cast<int>(delivered.size()) == lanes;
    }, std::chrono::seconds(30)))
        << delivered.size() << " of " << lanes << " delivered after the cluster came back";
}

// A lease id names the shard databases its cursors are on (docs/scaling.md, "Lease ids"), so
// extending or releasing it asks those only: with the second cluster down, a lease held on the
// first is extended; one held on the second answers 503 (never "not found"); a lease of a pop
// that may take several partitions names every shard.
TEST(Shards, LeaseExtensionAsksOnlyTheDatabasesItsLeaseNames) {
    constexpr int lanes = 40;
    sharded_deployment d;
    ASSERT_NO_THROW(d.init());
    broker_process broker(d.a.conninfo());
    auto c = client_of(broker);
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", "leases"}, {"options", {{"leaseTime", 60}}}}).status, 200);
    json items = json::array();
    for (int p = 0; p < lanes; ++p)
        items.push_back({{"queue", "leases"}, {"partition", "lane" + std::to_string(p)}, {"payload", p}});
    ASSERT_EQ(c.post("/api/v1/push", json{{"items", items}}).status, 201);

    // One-partition leases, and on which shard database each one's cursor is.
    std::string on_first, on_second;
    for (int i = 0; i < lanes && (on_first.empty() || on_second.empty()); ++i) {
        auto r = c.get("/api/v1/pop/queue/leases?batch=1&consumerGroup=g");
        ASSERT_EQ(r.status, 200) << r.body;
        const std::string lease = json::parse(r.body)["leaseId"];
        EXPECT_EQ(lease.substr(14, 1), "8") << "a shard's lease id names its shards: " << lease;
        for (std::size_t s = 0; s < d.shards.size(); ++s)
            if (d.on_shard(s, "SELECT count(*) FROM queen.log_consumers WHERE lease_id = '" + lease + "'") == "1")
                (s < 2 ? on_first : on_second) = lease;
    }
    ASSERT_FALSE(on_first.empty());
    ASSERT_FALSE(on_second.empty());
    auto wide = c.get("/api/v1/pop/queue/leases?batch=4&partitions=4&consumerGroup=g");
    ASSERT_EQ(wide.status, 200) << wide.body;
    const json wide_body = json::parse(wide.body);
    const std::string wide_lease = wide_body["leaseId"];
    const int wide_partitions = wide_body["partitionsClaimed"];
    EXPECT_GT(wide_partitions, 1) << wide.body;
    EXPECT_EQ(wide_lease.substr(wide_lease.size() - 8), "ffffffff") << wide_lease;

    d.b.kill_postmaster();
    auto extended = c.post("/api/v1/lease/" + on_first + "/extend", json{{"seconds", 300}});
    ASSERT_EQ(extended.status, 200) << extended.body;
    EXPECT_EQ(json::parse(extended.body)[0]["success"], true) << extended.body;
    const std::string first_extended = "SELECT count(*) FROM queen.log_consumers WHERE lease_id = '" + on_first +
                                       "' AND lease_expires_at > now() + interval '200 seconds'";
    EXPECT_EQ(std::stoll(d.on_shard(0, first_extended)) + std::stoll(d.on_shard(1, first_extended)), 1)
        << "the lease's one cursor was extended, on its own database";
    EXPECT_EQ(c.post("/api/v1/lease/" + on_second + "/extend", json{{"seconds", 300}}).status, 503);
    EXPECT_EQ(c.post("/api/v1/lease/" + wide_lease + "/extend", json{{"seconds", 300}}).status, 503);
    d.b.start();

    auto later = c.post("/api/v1/lease/" + on_second + "/extend", json{{"seconds", 300}});
    ASSERT_EQ(later.status, 200) << later.body;
    EXPECT_EQ(json::parse(later.body)[0]["success"], true) << later.body;
    auto spanning = c.post("/api/v1/lease/" + wide_lease + "/extend", json{{"seconds", 300}});
    ASSERT_EQ(spanning.status, 200) << spanning.body;
    EXPECT_EQ(json::parse(spanning.body)[0]["success"], true) << spanning.body;
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.log_consumers WHERE lease_id = '" + wide_lease +
                              "' AND lease_expires_at > now() + interval '200 seconds'"),
              wide_partitions)
        << "every partition of the wide lease, on whichever database, was extended";
}

}  // namespace
}  // namespace queen::test
