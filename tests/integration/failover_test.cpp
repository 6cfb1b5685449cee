// Failover with pg_auto_failover (docs/deployment.md, "Failover with pg_auto_failover"): a
// monitor, a primary and a secondary; the broker on the formation's multi-host URL. The primary
// (its keeper and its PostgreSQL) is killed under steady push and consume load while long-polls
// are parked. Then the exact accounting: every push a producer was answered for is stored once on
// the new primary and nothing else is; the group received every stored message, first in order
// per lane, and acknowledged all of them; the parked long-polls were answered. The same for one
// shard of a sharded deployment whose shard database is such a formation. Run as their own suite
// (scripts/run-tests.sh).
#include "auto_failover.hpp"
#include "sharded_deployment.hpp"
#include "steady_load.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

TEST(Failover, KillingThePrimaryUnderLoadLosesAndDoublesNothing) {
    auto_failover_formation f;
    temp_dir spool("failover", true);
    broker_process b(f.url(), {{"QUEEN_SPOOL_DIR", spool.path.string()}, {"QUEEN_LONGPOLL_RECHECK_MS", "500"}});
    auto admin = client_of(b);
    configure_queue(admin, "fo", {{"leaseTime", 5}});
    configure_queue(admin, "fo-idle");
    steady_load load(b.port(), "fo");

    // Long-polls parked on an empty queue across the switch.
    std::vector<http_reply> parked(2);
    std::vector<std::thread> parkers;
    for (auto& reply : parked)
        parkers.emplace_back([&b, &reply] {
            http_client c("127.0.0.1", b.port());
            reply = c.get("/api/v1/pop/queue/fo-idle?batch=1&wait=true&timeout=60000");
        });

    load.wait_produced(150);
    const auto [new_primary, promoted_after] = f.fail_over();
    // The broker reaches the new primary: /health answers 200 again.
    ASSERT_TRUE(eventually([&] { return admin.get("/health").status == 200; }, 60s)) << b.log();
    std::cout << "[ failover ] the secondary took writes " << promoted_after.count() << " ms after the kill\n";
    // One message for each parked long-poll, pushed once, in two partitions (a partition is
    // leased to one consumer at a time).
    for (int i = 0; i < 2; ++i) {
        auto r = admin.post("/api/v1/push", json{{"items", {{{"queue", "fo-idle"}, {"partition", "p" + std::to_string(i)},
                                                              {"payload", i}}}}});
        ASSERT_EQ(r.status, 201) << r.body;
    }
    for (auto& t : parkers) t.join();
    std::cout << "[ failover ] the monitor's events:\n" << f.events() << "\n";
    for (const auto& r : parked) EXPECT_EQ(r.status, 200) << "a parked long-poll: " << r.body;

    // Load after the switch, then every answered push consumed and acknowledged.
    load.wait_produced(load.produced() + 150);
    load.stop_producing();
    ASSERT_TRUE(eventually([&] { return load.all_delivered(); }, 90s)) << "not every stored message reached the group";
    // What an ack lost in the switch left leased comes back after its lease and is acknowledged.
    ASSERT_TRUE(eventually([&] {
        return f.run_sql(new_primary, "SELECT count(*) FROM queen.messages m WHERE m.queue = 'fo' AND m.\"offset\" > "
                                      "(SELECT max(c.committed) FROM queen.log_consumers c WHERE c.partition_id = "
                                      "m.partition_id AND c.consumer_group = 'g')") == "0";
    }, 60s)) << "the group did not acknowledge every message";
    load.stop_consuming();

    std::cout << "[ failover ] " << load.summary() << "\n";
    EXPECT_EQ(static_cast<int>(load.answered().size()), load.produced()) << "every push was answered in the end";
    EXPECT_EQ(f.run_sql(new_primary, "SELECT count(*) FROM queen.messages WHERE queue = 'fo'"),
              std::to_string(load.answered().size()))
        << "stored once each";
    EXPECT_EQ(f.run_sql(new_primary, "SELECT count(DISTINCT transaction_id) FROM queen.messages WHERE queue = 'fo'"),
              std::to_string(load.answered().size()));
    EXPECT_EQ(load.delivered(), load.answered()) << "delivered exactly what was stored";
    EXPECT_EQ(load.out_of_order(), 0) << "first deliveries in order per lane";
}

// A shard database on a formation (docs/scaling.md, "Failover of a shard"): the proxy's cluster
// and the broker's listener name both nodes with target_session_attrs=read-write. Killing the
// shard's primary under push and consume load: pushes to that shard answer 503 until the
// switch and the producer's retries store each message once; everything answered is stored
// once over the four shard databases, delivered to the group and acknowledged.
TEST(Failover, AShardsPrimaryKilledUnderLoadLosesAndDoublesNothing) {
    sharded_deployment d;
    auto_failover_formation f("shard3");
    d.shards[3] = f.conninfo();  // the fourth shard database on the formation instead of d.b
    ASSERT_NO_THROW(d.init());
    broker_process b(d.a.conninfo());
    auto admin = client_of(b);
    configure_queue(admin, "sfo", {{"leaseTime", 5}});
    steady_load load(b.port(), "sfo");

    load.wait_produced(150);
    const auto [new_primary, promoted_after] = f.fail_over();
    std::cout << "[ failover ] the shard's secondary took writes " << promoted_after.count() << " ms after the kill\n";
    load.wait_produced(load.produced() + 150);
    load.stop_producing();
    ASSERT_TRUE(eventually([&] { return load.all_delivered(); }, 90s)) << "not every stored message reached the group";
    load.stop_consuming();

    // Stored once over the shard databases: three plain ones and the formation's new primary.
    const std::string ids = "SELECT transaction_id FROM queen.messages WHERE queue = 'sfo'";
    std::multiset<std::string> stored;
    for (std::size_t i = 0; i < 3; ++i)
        for (const auto& id : d.rows_on_shard(i, ids)) stored.insert(id);
    const auto on_formation = f.rows(new_primary, ids);
    stored.insert(on_formation.begin(), on_formation.end());
    std::cout << "[ failover ] " << load.summary() << ", stored " << stored.size() << " (" << on_formation.size()
              << " on the formation's shard)\n";
    EXPECT_GT(load.push_answers().count("refused 503"), 0u) << "no push met the shard's switch";
    EXPECT_EQ(static_cast<int>(load.answered().size()), load.produced());
    EXPECT_EQ(stored.size(), load.answered().size()) << "stored once each";
    EXPECT_EQ(std::set<std::string>(stored.begin(), stored.end()), load.answered());
    EXPECT_FALSE(on_formation.empty()) << "the formation's shard held some of the messages";
    EXPECT_EQ(load.delivered(), load.answered());
    EXPECT_EQ(load.out_of_order(), 0) << "first deliveries in order per lane";
}

}  // namespace
}  // namespace queen::test
