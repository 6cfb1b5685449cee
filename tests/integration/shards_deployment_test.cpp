// Shards, the deployment: `queen shards init` refuses bad arguments and changes nothing; a second
// proxy over the same shards serves the same deployment; the status, analytics, resources and
// metrics routes add up every shard's figures.
//
// A sharded deployment end to end (docs/scaling.md): `queen shards init` over four shard
// databases on two PostgreSQL clusters and a proxy database, a broker started on the proxy.
// Run as their own suite (scripts/run-tests.sh). The other files of the suite:
// shards_delivery, _admin and _deployment_test.cpp.
#include "shards_support.hpp"
#include "sharded_deployment.hpp"
#include "shell_command.hpp"
#include "stats_refresh.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace queen::test {
namespace {

using namespace shards_support;
using nlohmann::json;

TEST(Shards, InitRefusesBadArgumentsAndChangesNothing) {
    auto none = run_shell(shards_command("init --shard 'dbname=x'"));
    EXPECT_EQ(none.status, 2);
    EXPECT_NE(none.out.find("--proxy is needed"), std::string::npos) << none.out;
    auto odd = run_shell(shards_command("init --proxy 'dbname=x' --shard 'dbname=y' --logical-shards 12"));
    EXPECT_EQ(odd.status, 2);
    EXPECT_NE(odd.out.find("power of 2"), std::string::npos) << odd.out;
    auto verb = run_shell(shards_command("grow --proxy 'dbname=x'"));
    EXPECT_EQ(verb.status, 2);
    EXPECT_NE(verb.out.find("unknown command 'grow'"), std::string::npos) << verb.out;
}

// A proxy holds no data: a second proxy database over the same shards serves the same
// deployment. Pushes through either, pops through one and acks through the other: every
// message once, in order per partition.
TEST(Shards, TwoProxiesOverTheSameShardsServeOneDeployment) {
    constexpr int lanes = 8, per_lane = 6;
    sharded_deployment d;
    ASSERT_NO_THROW(d.init());
    // Every function of the proxy, generated or hand-written, says what it is (COMMENT ON), and
    // each generated one names its operation of sql/operations.json.
    EXPECT_EQ(d.a.column_in(d.a.database(),
                            "SELECT p.oid::regprocedure::text FROM pg_proc p "
                            "WHERE p.pronamespace IN ('queen'::regnamespace, 'queen_proxy'::regnamespace) "
                            "AND obj_description(p.oid, 'pg_proc') IS NULL AND NOT EXISTS "
                            "(SELECT 1 FROM pg_depend e WHERE e.objid = p.oid AND e.deptype = 'e') ORDER BY 1"),
              std::vector<std::string>{});
    EXPECT_EQ(d.a.run_sql("SELECT count(*) FROM queen_proxy.api_routes WHERE operation IS NULL"), "0");
    EXPECT_GT(std::stoi(d.a.run_sql("SELECT count(*) FROM queen_proxy.api_routes")), 100);
    d.a.run_sql("CREATE DATABASE proxy2");
    std::string args = "init --proxy " + shell_quoted(d.a.conninfo_for("proxy2"));
    for (const auto& s : d.shards) args += " --shard " + shell_quoted(s);
    const auto second = run_shell(shards_command(args));
    ASSERT_EQ(second.status, 0) << second.out;
    broker_process one(d.a.conninfo()), two(d.a.conninfo_for("proxy2"));
    auto c1 = client_of(one), c2 = client_of(two);
    ASSERT_EQ(c1.post("/api/v1/configure", json{{"queue", "both"}, {"options", {{"leaseTime", 30}}}}).status, 200);
    for (int i = 0; i < per_lane; ++i) {
        json items = json::array();
        for (int p = 0; p < lanes; ++p)
            items.push_back({{"queue", "both"}, {"partition", "l" + std::to_string(p)},
                             {"transactionId", "t-" + std::to_string(p) + "-" + std::to_string(i)},
                             {"payload", {{"p", p}, {"seq", i}}}});
        auto r = (i % 2 ? c2 : c1).post("/api/v1/push", json{{"items", items}});
        ASSERT_EQ(r.status, 201) << r.body;
    }
    std::map<int, int> next_seq;
    int delivered = 0;
    // Popped through one proxy's broker, acked through the other's.
    for (int round = 0; round < 200 && delivered < lanes * per_lane; ++round)
        pop_and_ack(round % 2 ? c2 : c1, round % 2 ? c1 : c2, "/api/v1/pop/queue/both?consumerGroup=g&batch=5&wait=false",
                    "g", [&](const json& m) {
                        const int p = m["data"]["p"], seq = m["data"]["seq"];
                        EXPECT_EQ(seq, next_seq[p]) << "lane " << p << " out of order or doubled";
                        next_seq[p] = seq + 1;
                        ++delivered;
                        return json{{"status", "completed"}};
                    });
    EXPECT_EQ(delivered, lanes * per_lane);
    EXPECT_EQ(c1.get("/api/v1/pop/queue/both?consumerGroup=g&wait=false").status, 204);
    EXPECT_EQ(c2.get("/api/v1/pop/queue/both?consumerGroup=g&wait=false").status, 204);
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.messages WHERE queue = 'both'"), lanes * per_lane);
    // The group was registered once per shard, by whichever proxy came first.
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.consumer_groups WHERE consumer_group = 'g'"), 4);
}

// The status, analytics, resources and metrics routes add up every shard's figures: a queue
// whose partitions live on four shard databases is counted once, with all its partitions,
// messages and dead letters.
TEST(Shards, StatusResourcesAndMetricsAddUpEveryShard) {
    constexpr int lanes = 12;
    sharded_deployment d;
    ASSERT_NO_THROW(d.init());
    broker_process broker(d.a.conninfo());
    auto c = client_of(broker);
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", "st"}, {"options", {{"leaseTime", 30}}}}).status, 200);
    json items = json::array();
    for (int p = 0; p < lanes; ++p)
        for (int i = 0; i < 2; ++i)
            items.push_back({{"queue", "st"}, {"partition", "e" + std::to_string(p)}, {"payload", {{"p", p}, {"i", i}}}});
    ASSERT_EQ(c.post("/api/v1/push", json{{"items", items}}).status, 201);
    std::set<std::string> databases;
    for (int p = 0; p < lanes; ++p)
        databases.insert(d.on_shard(0, "SELECT ((queen.partition_hash('st', 'e" + std::to_string(p) + "') & 15) % 4)::text"));
    ASSERT_GE(databases.size(), 3u) << "the lanes spread over the shard databases";

    // Every message popped; the first of each lane dead-lettered, the second completed.
    int dead = 0, done = 0;
    for (int round = 0; round < 20 && dead + done < 2 * lanes; ++round)
        pop_and_ack(c, c, "/api/v1/pop/queue/st?batch=24&partitions=12&wait=false", "", [&](const json& m) {
            const bool first = m["data"]["i"] == 0;
            (first ? dead : done)++;
            return first ? json{{"status", "dlq"}, {"error", "boom"}} : json{{"status", "completed"}};
        });
    ASSERT_EQ(dead, lanes);
    ASSERT_EQ(done, lanes);
    ASSERT_TRUE(refresh_stats_taken([&] { return c.post("/api/v1/stats/refresh", json::object()); }))
        << "every stats refresh was skipped";

    const json status = get_ok(c, "/api/v1/status?queue=st");
    EXPECT_EQ(status["messages"]["total"], 2 * lanes) << status.dump();
    EXPECT_EQ(status["deadLetterQueue"]["totalMessages"], lanes) << status.dump();
    EXPECT_NE(status.dump().find("boom"), std::string::npos) << "the commonest error: " << status.dump();

    const json list = get_ok(c, "/api/v1/status/queues?queue=st");
    ASSERT_TRUE(list["queues"].is_array()) << list.dump();
    ASSERT_EQ(list["queues"].size(), 1u) << "one queue, though four databases hold it: " << list.dump();
    EXPECT_EQ(list["queues"][0]["partitions"], lanes + 1) << "and Default: " << list.dump();
    EXPECT_EQ(list["queues"][0]["messages"]["total"], 2 * lanes) << list.dump();

    const json detail = get_ok(c, "/api/v1/status/queues/st");
    EXPECT_EQ(detail["partitions"].size(), static_cast<std::size_t>(lanes + 1)) << detail.dump();

    const json overview = get_ok(c, "/api/v1/resources/overview");
    EXPECT_EQ(overview["queues"], 1) << overview.dump();
    EXPECT_EQ(overview["partitions"], lanes + 1) << overview.dump();

    auto metrics = c.get("/metrics/prometheus");
    ASSERT_EQ(metrics.status, 200) << metrics.body;
    EXPECT_NE(metrics.body.find("queen_queue_partitions{queue=\"st\"} " + std::to_string(lanes + 1)), std::string::npos)
        << metrics.body;
    EXPECT_NE(metrics.body.find("queen_dlq_depth_by_queue{queue=\"st\"} " + std::to_string(lanes)), std::string::npos)
        << metrics.body;

    for (const char* page : {"/api/v1/analytics/queue-ops?queue=st", "/api/v1/analytics/retention",
                             "/api/v1/analytics/worker-metrics", "/api/v1/analytics/system-metrics",
                             "/api/v1/analytics/queue-lag", "/api/v1/status/analytics"})
        EXPECT_EQ(c.get(page).status, 200) << page;
}

}  // namespace
}  // namespace queen::test
