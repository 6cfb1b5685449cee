// Shards, delivery: every message pushed through the proxy delivered exactly once, in order per
// partition, from the shard its partition hashes to; a four-stage pipeline of transactions over
// a thousand partitions; the benchmark's concurrent load; a transaction across shards refused.
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

#include <atomic>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

using namespace shards_support;
using nlohmann::json;

constexpr int partitions = 40;
constexpr int per_partition = 5;

TEST(Shards, InitServesPushPopAndAckOverFourShardsOnTwoClusters) {
    sharded_deployment d;
    const auto init = run_shell(shards_command(d.init_arguments()));
    ASSERT_EQ(init.status, 0) << init.out;
    EXPECT_NE(init.out.find("16 logical shards over 4 databases"), std::string::npos) << init.out;
    const auto again = run_shell(shards_command(d.init_arguments()));
    ASSERT_EQ(again.status, 0) << "init is idempotent: " << again.out;

    broker_process broker(d.a.conninfo());
    auto c = client_of(broker);
    auto configured = c.post("/api/v1/configure", json{{"queue", "orders"}, {"options", {{"leaseTime", 30}}}});
    ASSERT_EQ(configured.status, 200) << configured.body;
    EXPECT_FALSE(json::parse(configured.body)["partitionId"].is_null()) << configured.body;
    // The queue's configuration is on every shard, its Default partition on one.
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.queues WHERE name = 'orders'"), 4);
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.log_partitions WHERE name = 'Default'"), 1);
    for (int i = 0; i < per_partition; ++i) {
        json items = json::array();
        for (int p = 0; p < partitions; ++p)
            items.push_back({{"queue", "orders"}, {"partition", "p" + std::to_string(p)},
                             {"transactionId", "t-" + std::to_string(p) + "-" + std::to_string(i)},
                             {"payload", {{"p", p}, {"seq", i}}}});
        auto r = c.post("/api/v1/push", json{{"items", items}});
        ASSERT_EQ(r.status, 201) << r.body;
        auto answers = json::parse(r.body);
        ASSERT_EQ(answers.size(), items.size());
        for (std::size_t k = 0; k < answers.size(); ++k) {
            EXPECT_EQ(answers[k]["status"], "queued");
            EXPECT_EQ(answers[k]["transaction_id"], items[k]["transactionId"]) << "answers in request order";
        }
    }

    // Queue-wide pops and acks until the group has everything: each message once, in order.
    std::map<int, int> next_seq;
    std::set<std::string> seen;
    for (int round = 0; round < 400 && static_cast<int>(seen.size()) < partitions * per_partition; ++round)
        pop_and_ack(c, c, "/api/v1/pop/queue/orders?consumerGroup=g&batch=10&wait=false", "g", [&](const json& m) {
            const int p = m["data"]["p"], seq = m["data"]["seq"];
            EXPECT_TRUE(seen.insert(m["transactionId"].get<std::string>()).second) << "doubled " << m;
            EXPECT_EQ(seq, next_seq[p]) << "partition p" << p << " out of order";
            next_seq[p] = seq + 1;
            return json{{"status", "completed"}};
        });
    EXPECT_EQ(static_cast<int>(seen.size()), partitions * per_partition);
    auto empty = c.get("/api/v1/pop/queue/orders?consumerGroup=g&batch=10&wait=false");
    EXPECT_EQ(empty.status, 204) << empty.body;

    // A partition's pop goes to its shard and answers its messages in order.
    auto one = c.get("/api/v1/pop/queue/orders/partition/p7?consumerGroup=h&batch=10&wait=false");
    ASSERT_EQ(one.status, 200) << one.body;
    std::vector<int> seqs;
    const json partition_popped = json::parse(one.body);
    for (const auto& m : partition_popped["messages"]) {
        EXPECT_EQ(m["data"]["p"], 7);
        seqs.push_back(m["data"]["seq"]);
    }
    EXPECT_EQ(seqs, (std::vector<int>{0, 1, 2, 3, 4}));

    // Every database holds a share; each partition lives where its id's low bits say.
    int stored = 0;
    for (std::size_t i = 0; i < d.shards.size(); ++i) {
        const int here = std::stoi(d.on_shard(i, "SELECT coalesce(sum(last_offset - first_offset + 1), 0) "
                                                 "FROM queen.log_segments"));
        EXPECT_GT(here, 0) << "shard " << i << " holds none of the messages";
        stored += here;
        EXPECT_EQ(d.on_shard(i, "SELECT count(*) FROM queen.log_partitions p JOIN queen.log_segments s "
                                "ON s.partition_id = p.id WHERE (p.id & 15) % 4 <> " + std::to_string(i)),
                  "0")
            << "shard " << i << " holds a partition of another shard";
    }
    EXPECT_EQ(stored, partitions * per_partition);

    const auto status = run_shell(shards_command("status --proxy " + shell_quoted(d.a.conninfo())));
    ASSERT_EQ(status.status, 0) << status.out;
    EXPECT_NE(status.out.find("4 shard databases"), std::string::npos) << status.out;

    // A queue's detail lists every shard's partitions, with their counts.
    auto detail = c.get("/api/v1/resources/queues/orders");
    ASSERT_EQ(detail.status, 200) << detail.body;
    const json queue = json::parse(detail.body);
    EXPECT_EQ(queue["partitions"].size(), static_cast<std::size_t>(partitions + 1)) << "and Default";
    int total = 0;
    for (const auto& p : queue["partitions"]) total += p["stats"]["total"].get<int>();
    EXPECT_EQ(total, partitions * per_partition);

    // The status page adds up every shard's figures, PostgreSQL's statistics too.
    ASSERT_TRUE(refresh_stats_taken([&] { return c.post("/api/v1/stats/refresh", json::object()); }))
        << "every stats refresh was skipped";
    auto status_page = c.get("/api/v1/status?queue=orders");
    ASSERT_EQ(status_page.status, 200) << status_page.body;
    const json status_json = json::parse(status_page.body);
    EXPECT_EQ(status_json["messages"]["total"], partitions * per_partition) << status_page.body;
    auto postgres = c.get("/api/v1/analytics/postgres-stats");
    ASSERT_EQ(postgres.status, 200) << postgres.body;
    EXPECT_NE(postgres.body.find("\"log_segments\""), std::string::npos) << postgres.body;
    EXPECT_NE(postgres.body.find("shard0, shard1, shard2, shard3"), std::string::npos)
        << "the database cache names every shard database: " << postgres.body;
}

// Each stage pops a partition's messages and, in one transaction, acks them and pushes them to
// the next stage under the same partition name: the same shard, so one local transaction.
TEST(Shards, FourStagePipelineOverAThousandPartitionsHasNoDuplicatesGapsOrReordering) {
    constexpr int lanes = 1000, per_lane = 3, stages = 4;
    sharded_deployment d;
    ASSERT_NO_THROW(d.init());
    std::vector<std::unique_ptr<broker_process>> brokers;
    for (int i = 0; i < 2; ++i) brokers.push_back(std::make_unique<broker_process>(d.a.conninfo()));
    auto stage_queue = [](int k) { return "stage" + std::to_string(k); };
    {
        auto c = client_of(*brokers[0]);
        for (int k = 0; k <= stages; ++k)
            ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", stage_queue(k)}, {"options", {{"leaseTime", 5}}}})
                          .status,
                      200);
        for (int i = 0; i < per_lane; ++i) {
            json items = json::array();
            for (int p = 0; p < lanes; ++p)
                items.push_back({{"queue", stage_queue(0)}, {"partition", "lane" + std::to_string(p)},
                                 {"transactionId", "s0-" + std::to_string(p) + "-" + std::to_string(i)},
                                 {"payload", {{"p", p}, {"seq", i}}}});
            auto r = c.post("/api/v1/push", json{{"items", items}});
            ASSERT_EQ(r.status, 201) << r.body;
        }
    }

    std::atomic<bool> done{false};
    std::atomic<int> committed{0}, refused{0};
    auto worker = [&](int id) {
        std::mt19937 rng(static_cast<unsigned>(id * 7919 + 17));
        http_client c("127.0.0.1", brokers[id % 2]->port());
        while (!done) {
            const int k = static_cast<int>(rng() % stages);
            auto r = c.get("/api/v1/pop/queue/" + stage_queue(k) + "?consumerGroup=pipe&batch=4&wait=false");
            if (r.status != 200) continue;
            const json body = json::parse(r.body);
            json push_items = json::array();
            for (const auto& m : body["messages"]) {
                const json& data = m["data"];
                push_items.push_back({{"queue", stage_queue(k + 1)}, {"partition", m["partition"]},
                                      {"transactionId", "s" + std::to_string(k + 1) + "-" +
                                                            std::to_string(data["p"].get<int>()) + "-" +
                                                            std::to_string(data["seq"].get<int>())},
                                      {"payload", data}});
            }
            const json& last = body["messages"].back();
            json tx{{"operations", json::array({{{"type", "ack"}, {"transactionId", last["transactionId"]},
                                                 {"partitionId", last["partitionId"]}, {"leaseId", last["leaseId"]},
                                                 {"status", "completed"}, {"consumerGroup", "pipe"}},
                                                {{"type", "push"}, {"items", push_items}}})},
                    {"requiredLeases", json::array({body["leaseId"]})}};
            auto t = c.post("/api/v1/transaction", tx);
            if (t.status == 200 && json::parse(t.body)["success"] == true)
                ++committed;
            else
                ++refused;
        }
    };
    const std::string output_count =
        "SELECT count(*) FROM queen.messages WHERE queue = '" + stage_queue(stages) + "'";
    {
        joined_threads workers(done);
        for (int i = 0; i < 4; ++i) workers.start(worker, i);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
        while (d.sum_on_shards(output_count) < lanes * per_lane && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
        workers.join();
    }
    std::cout << "[ shards pipeline ] committed " << committed << ", not committed " << refused << "\n";

    // Every stage's output on every shard: exactly once, no gap, in order per partition (a
    // partition lives on one shard, so each shard's view is its whole story).
    for (int k = 1; k <= stages; ++k) {
        SCOPED_TRACE("stage " + std::to_string(k));
        const std::string q = stage_queue(k);
        EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.messages WHERE queue = '" + q + "'"), lanes * per_lane);
        EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM (SELECT partition, payload->>'seq' FROM queen.messages "
                                  "WHERE queue = '" + q + "' GROUP BY 1, 2 HAVING count(*) > 1) d"),
                  0)
            << "duplicates";
        EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM (SELECT (payload->>'seq')::int AS seq, \"offset\", "
                                  "lag((payload->>'seq')::int) OVER (PARTITION BY partition ORDER BY \"offset\") "
                                  "AS prev FROM queen.messages WHERE queue = '" + q + "') x "
                                  "WHERE seq <> coalesce(prev, -1) + 1 OR seq <> \"offset\" - 1"),
                  0)
            << "gaps or order violations";
    }
}

// The benchmark's headline load through the proxy, with its own verification: producers and
// consumers at once (fused pushes, pops and acks), every message delivered once, and in each
// partition in offset order as the consumers received them.
TEST(Shards, ConcurrentProducersAndConsumersKeepEveryPartitionInOrder) {
    sharded_deployment d;
    ASSERT_NO_THROW(d.init());
    broker_process broker(d.a.conninfo());
    const std::string bench = std::filesystem::path(QUEEN_BROKER_BINARY).parent_path() / "queen_bench";
    ASSERT_TRUE(std::filesystem::exists(bench)) << bench << " is built with the tests (make build)";
    const auto run = run_shell(bench + " --url http://127.0.0.1:" + std::to_string(broker.port()) +
                               " --quiet --mode both --messages 20000 --partitions 100 --connections 16"
                               " --push-batch 100 --pop-batch 100 --payload-bytes 200 2>&1");
    EXPECT_EQ(run.status, 0) << run.out;
    EXPECT_NE(run.out.find("duplicates 0, missing 0, order violations 0"), std::string::npos) << run.out;
}

// A transaction whose pushes and acks live on two shards is refused whole.
TEST(Shards, TransactionAcrossShardsIsRefusedAndWritesNothing) {
    sharded_deployment d;
    ASSERT_NO_THROW(d.init());
    broker_process broker(d.a.conninfo());
    auto c = client_of(broker);
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", "tx"}}).status, 200);
    // Two partition names whose shards are different databases.
    std::vector<std::string> names;
    std::set<std::string> databases;
    for (int i = 0; names.size() < 2 && i < 100; ++i) {
        const std::string name = "n" + std::to_string(i);
        const std::string shard =
            d.on_shard(0, "SELECT ((queen.partition_hash('tx', '" + name + "') & 15) % 4)::text");
        if (databases.insert(shard).second) names.push_back(name);
    }
    ASSERT_EQ(names.size(), 2u);
    json tx{{"operations", json::array({{{"type", "push"},
                                         {"items", json::array({{{"queue", "tx"}, {"partition", names[0]},
                                                                 {"payload", {{"a", 1}}}},
                                                                {{"queue", "tx"}, {"partition", names[1]},
                                                                 {"payload", {{"b", 2}}}}})}}})}};
    auto t = c.post("/api/v1/transaction", tx);
    EXPECT_EQ(t.status, 409) << t.body;
    EXPECT_NE(t.body.find("spans 2 shard databases"), std::string::npos) << t.body;
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.messages WHERE queue = 'tx'"), 0);

    json local{{"operations", json::array({{{"type", "push"},
                                            {"items", json::array({{{"queue", "tx"}, {"partition", names[0]},
                                                                    {"payload", {{"a", 1}}}}})}}})}};
    auto ok = c.post("/api/v1/transaction", local);
    EXPECT_EQ(ok.status, 200) << ok.body;
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.messages WHERE queue = 'tx'"), 1);
}

}  // namespace
}  // namespace queen::test
