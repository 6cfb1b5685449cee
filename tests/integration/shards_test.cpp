// A sharded deployment end to end (docs/scaling.md): `queen shards init` over four shard
// databases on two PostgreSQL clusters and a proxy database, a broker started on the proxy,
// and every message pushed through it delivered exactly once, in order per partition, from
// the shard its partition hashes to. Run as their own suite (scripts/run-tests.sh).
#include "sharded_deployment.hpp"
#include "shell_command.hpp"
#include "test_cluster.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;

constexpr int partitions = 40;
constexpr int per_partition = 5;

// One pop of `path` (a 200 or a 204 expected) through `popper`; each message goes to `ack_of`,
// which checks it and gives its ack's status (and error), and the batch is acked at once through
// `acker` for `group` ("" for queue mode), every ack succeeding. Returns how many messages came.
int pop_and_ack(http_client& popper, http_client& acker, const std::string& path, const std::string& group,
                const std::function<json(const json&)>& ack_of) {
    auto r = popper.get(path);
    EXPECT_TRUE(r.status == 200 || r.status == 204) << r.status << " " << r.body;
    if (r.status != 200) return 0;
    json acks = json::array();
    const json popped = json::parse(r.body);
    for (const auto& m : popped["messages"]) {
        json one{{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]}, {"leaseId", m["leaseId"]}};
        one.update(ack_of(m));
        acks.push_back(one);
    }
    json body{{"acknowledgments", acks}};
    if (!group.empty()) body["consumerGroup"] = group;
    auto a = acker.post("/api/v1/ack/batch", body);
    EXPECT_EQ(a.status, 200) << a.body;
    if (a.status == 200) {
        const json answers = json::parse(a.body);
        for (const auto& one : answers) EXPECT_TRUE(one["success"].get<bool>()) << one;
    }
    return static_cast<int>(acks.size());
}


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
    ASSERT_EQ(c.post("/api/v1/stats/refresh", json::object()).status, 200);
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

// Consumer groups over shards: a group popping on one shard is registered on every shard, a
// queue's seek moves its cursors on all of them, listings sum the shards, and a delete drops
// the group everywhere.
TEST(Shards, ConsumerGroupsSeekListAndDeleteAcrossShards) {
    sharded_deployment d;
    ASSERT_NO_THROW(d.init());
    broker_process broker(d.a.conninfo());
    auto c = client_of(broker);
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", "cg"}}).status, 200);
    json items = json::array();
    for (int p = 0; p < 16; ++p)
        for (int i = 0; i < 2; ++i)
            items.push_back({{"queue", "cg"}, {"partition", "e" + std::to_string(p)}, {"payload", {{"i", i}}}});
    ASSERT_EQ(c.post("/api/v1/push", json{{"items", items}}).status, 201);

    // One pop registers the group on all four shards.
    auto first = c.get("/api/v1/pop/queue/cg?consumerGroup=readers&batch=2&wait=false");
    ASSERT_EQ(first.status, 200) << first.body;
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.consumer_groups WHERE consumer_group = 'readers'"), 4);

    // The group's cursors, from every shard: the one partition it consumed from.
    auto cursors = c.get("/api/v1/consumer-groups/readers");
    ASSERT_EQ(cursors.status, 200) << cursors.body;
    EXPECT_EQ(json::parse(cursors.body)["cg"]["partitions"].size(), 1u) << cursors.body;

    // Seek to the end on the queue: every shard's cursors move, nothing is left to pop.
    auto seek = c.post("/api/v1/consumer-groups/readers/queues/cg/seek", json{{"toEnd", true}});
    ASSERT_EQ(seek.status, 200) << seek.body;
    EXPECT_EQ(json::parse(seek.body)["partitionsUpdated"], 17) << "16 and Default: " << seek.body;
    auto none = c.get("/api/v1/pop/queue/cg?consumerGroup=readers&batch=10&wait=false");
    EXPECT_EQ(none.status, 204) << none.body;

    // Seek the queue back to the beginning on every shard, then one partition to its end: all
    // but that partition's two messages come again.
    auto back = c.post("/api/v1/consumer-groups/readers/queues/cg/seek", json{{"timestamp", "2000-01-01T00:00:00Z"}});
    ASSERT_EQ(back.status, 200) << back.body;
    auto skip = c.post("/api/v1/consumer-groups/readers/queues/cg/partitions/e5/seek", json::object());
    ASSERT_EQ(skip.status, 200) << skip.body;
    EXPECT_EQ(json::parse(skip.body)["partitionsUpdated"], 1) << skip.body;
    std::set<std::string> replayed;
    for (int round = 0; round < 100; ++round) {
        auto r = c.get("/api/v1/pop/queue/cg?consumerGroup=readers&batch=10&wait=false&autoAck=true");
        if (r.status == 204) break;
        ASSERT_EQ(r.status, 200) << r.body;
        const json popped = json::parse(r.body);
        for (const auto& m : popped["messages"]) {
            EXPECT_NE(popped["partition"], "e5");
            EXPECT_TRUE(replayed.insert(m["transactionId"].get<std::string>()).second);
        }
    }
    EXPECT_EQ(replayed.size(), 30u);

    // The listing sums the shards: one row for (readers, cg) with 16 partitions' lag.
    auto listing = c.get("/api/v1/consumer-groups");
    ASSERT_EQ(listing.status, 200) << listing.body;
    int rows = 0;
    for (const auto& g : json::parse(listing.body))
        if (g["name"] == "readers") {
            ++rows;
            EXPECT_EQ(g["queueName"], "cg");
        }
    EXPECT_EQ(rows, 1) << listing.body;

    // Delete with its metadata: gone from every shard, and a new pop registers it again.
    auto del = c.del("/api/v1/consumer-groups/readers");
    ASSERT_EQ(del.status, 200) << del.body;
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.consumer_groups WHERE consumer_group = 'readers'"), 0);
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.log_consumers WHERE consumer_group = 'readers'"), 0);
    EXPECT_EQ(c.get("/api/v1/pop/queue/cg?consumerGroup=readers&batch=2&wait=false").status, 200);
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.consumer_groups WHERE consumer_group = 'readers'"), 4);
}

// Dead letters over shards: listed newest first across shards with one total, requeued oldest
// failure first across shards, purged on every shard; their ids name their shard.
TEST(Shards, DeadLettersListRequeueAndPurgeAcrossShards) {
    constexpr int letters = 12;
    sharded_deployment d;
    ASSERT_NO_THROW(d.init());
    broker_process broker(d.a.conninfo());
    auto c = client_of(broker);
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", "dl"}}).status, 200);
    json items = json::array();
    for (int p = 0; p < letters; ++p)
        items.push_back({{"queue", "dl"}, {"partition", "m" + std::to_string(p)},
                         {"transactionId", "dl-" + std::to_string(p)}, {"payload", {{"p", p}}}});
    ASSERT_EQ(c.post("/api/v1/push", json{{"items", items}}).status, 201);

    // Each message dead-lettered in turn, so the order of failure is the order of these acks.
    std::vector<std::string> failed;
    for (int round = 0; round < 100 && static_cast<int>(failed.size()) < letters; ++round) {
        auto r = c.get("/api/v1/pop/queue/dl?consumerGroup=g&batch=1&wait=false");
        if (r.status == 204) continue;
        ASSERT_EQ(r.status, 200) << r.body;
        const json m = json::parse(r.body)["messages"][0];
        auto a = c.post("/api/v1/ack", json{{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                                           {"leaseId", m["leaseId"]}, {"consumerGroup", "g"}, {"status", "dlq"}});
        ASSERT_EQ(a.status, 200) << a.body;
        failed.push_back(m["transactionId"]);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_EQ(static_cast<int>(failed.size()), letters);
    for (std::size_t i = 0; i < d.shards.size(); ++i)
        EXPECT_EQ(d.on_shard(i, "SELECT count(*) FROM queen.dead_letters WHERE (id & 15) % 4 <> " + std::to_string(i)),
                  "0")
            << "shard " << i << " holds a dead letter whose id names another shard";

    // Pages over every shard: one total, newest failure first, no row twice.
    std::vector<std::string> listed;
    for (int offset = 0; offset < letters; offset += 5) {
        auto page = c.get("/api/v1/dlq?queue=dl&limit=5&offset=" + std::to_string(offset));
        ASSERT_EQ(page.status, 200) << page.body;
        const json body = json::parse(page.body);
        EXPECT_EQ(body["total"], letters);
        for (const auto& m : body["messages"]) listed.push_back(m["transactionId"]);
    }
    EXPECT_EQ(listed, std::vector<std::string>(failed.rbegin(), failed.rend()));

    // A requeue with a limit takes the oldest failures of all shards together.
    auto requeue = c.post("/api/v1/dlq/requeue", json{{"queue", "dl"}, {"limit", 4}});
    ASSERT_EQ(requeue.status, 200) << requeue.body;
    const json requeued = json::parse(requeue.body);
    EXPECT_EQ(requeued["requeued"], 4);
    EXPECT_EQ(requeued["remaining"], letters - 4);
    std::set<std::string> requeued_ids, oldest(failed.begin(), failed.begin() + 4);
    for (const auto& m : requeued["messages"]) requeued_ids.insert(m["transactionId"].get<std::string>());
    EXPECT_EQ(requeued_ids, oldest);

    auto purge = c.del("/api/v1/dlq?queue=dl");
    ASSERT_EQ(purge.status, 200) << purge.body;
    EXPECT_EQ(json::parse(purge.body)["purged"], letters - 4);
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.dead_letters"), 0);
}

// Streams over shards: a query registered on every shard under one id; each lane's cycles run
// on the shard of its source partition, with its state there and its sink pushes colocated by
// partition name; a cycle pushing to another shard's partition is refused whole.
TEST(Shards, StreamCyclesRunOnTheShardOfTheirSourcePartition) {
    constexpr int lanes = 6, per_lane = 3;
    sharded_deployment d;
    ASSERT_NO_THROW(d.init());
    broker_process broker(d.a.conninfo());
    auto c = client_of(broker);
    auto reg = c.post("/streams/v1/queries",
                      json{{"name", "counts"}, {"source_queue", "src"}, {"sink_queue", "snk"}, {"config_hash", "v1"}});
    ASSERT_EQ(reg.status, 200) << reg.body;
    const std::string query_id = json::parse(reg.body)["query_id"];
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.stream_queries WHERE id = '" + query_id + "'"), 4);

    json items = json::array();
    for (int i = 0; i < per_lane; ++i)
        for (int p = 0; p < lanes; ++p)
            items.push_back({{"queue", "src"}, {"partition", "lane" + std::to_string(p)}, {"payload", {{"i", i}}}});
    ASSERT_EQ(c.post("/api/v1/push", json{{"items", items}}).status, 201);

    std::map<std::string, std::string> lane_ids;  // partition name -> id
    for (int round = 0; round < 100 && static_cast<int>(lane_ids.size()) < lanes; ++round) {
        auto r = c.get("/api/v1/pop/queue/src?consumerGroup=streams.counts&batch=10&wait=false");
        if (r.status == 204) continue;
        ASSERT_EQ(r.status, 200) << r.body;
        const json batch = json::parse(r.body);
        const std::string partition = batch["partition"], partition_id = batch["partitionId"];
        lane_ids[partition] = partition_id;
        json pushes = json::array();
        for (const auto& m : batch["messages"])
            pushes.push_back({{"queue", "snk"}, {"partition", partition}, {"payload", m["data"]}});
        const json& last = batch["messages"].back();
        auto cycle = c.post("/streams/v1/cycle",
                            json{{"query_id", query_id},
                                 {"partition_id", partition_id},
                                 {"consumer_group", "streams.counts"},
                                 {"state_ops", json::array({{{"type", "upsert"}, {"key", "seen"},
                                                             {"value", batch["messages"].size()}}})},
                                 {"push_items", pushes},
                                 {"ack", {{"transactionId", last["transactionId"]}, {"leaseId", last["leaseId"]}}}});
        ASSERT_EQ(cycle.status, 200) << cycle.body;
        EXPECT_EQ(json::parse(cycle.body)["success"], true) << cycle.body;
    }
    ASSERT_EQ(static_cast<int>(lane_ids.size()), lanes);
    EXPECT_EQ(c.get("/api/v1/pop/queue/src?consumerGroup=streams.counts&batch=10&wait=false").status, 204);

    // Each lane's state is where its partition lives, and reads back through the proxy.
    for (const auto& [partition, id] : lane_ids) {
        const std::size_t shard = (std::stoull(id) & 15) % 4;
        EXPECT_EQ(d.on_shard(shard, "SELECT count(*) FROM queen.stream_state WHERE partition_id = " + id), "1")
            << partition;
        auto state = c.post("/streams/v1/state/get", json{{"query_id", query_id}, {"partition_id", id}});
        ASSERT_EQ(state.status, 200) << state.body;
        const json rows = json::parse(state.body)["rows"];
        ASSERT_EQ(rows.size(), 1u) << state.body;
        EXPECT_EQ(rows[0]["value"], per_lane);
    }
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.messages WHERE queue = 'snk'"), lanes * per_lane);

    // A cycle whose sink push lives on another shard database is refused, nothing applied.
    std::string far;
    const std::size_t home = (std::stoull(lane_ids["lane0"]) & 15) % 4;
    for (int i = 0; far.empty() && i < 100; ++i) {
        const std::string name = "far" + std::to_string(i);
        if (std::stoul(d.on_shard(0, "SELECT ((queen.partition_hash('snk', '" + name + "') & 15) % 4)::text")) != home)
            far = name;
    }
    auto refused = c.post("/streams/v1/cycle",
                          json{{"query_id", query_id},
                               {"partition_id", lane_ids["lane0"]},
                               {"consumer_group", "streams.counts"},
                               // Any lease: the proxy refuses before a shard looks at it.
                               {"lease_id", "00000000-0000-4000-8000-000000000000"},
                               {"state_ops", json::array({{{"type", "upsert"}, {"key", "x"}, {"value", 1}}})},
                               {"push_items", json::array({{{"queue", "snk"}, {"partition", far},
                                                            {"payload", {{"x", 1}}}}})}});
    EXPECT_EQ(refused.status, 409) << refused.body;
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.stream_state WHERE key = 'x'"), 0);
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.messages WHERE queue = 'snk'"), lanes * per_lane);
}

// The message browser and trace listings page over every shard: each message and trace once,
// in the one-database order, with one total.
TEST(Shards, BrowsingAndTracesPageOverEveryShard) {
    constexpr int messages = 20;
    sharded_deployment d;
    ASSERT_NO_THROW(d.init());
    broker_process broker(d.a.conninfo());
    auto c = client_of(broker);
    for (int i = 0; i < messages; ++i) {
        json one = json::array({{{"queue", "br"}, {"partition", "b" + std::to_string(i % 10)},
                                 {"transactionId", "br-" + std::to_string(i)}, {"payload", {{"i", i}}}}});
        ASSERT_EQ(c.post("/api/v1/push", json{{"items", one}}).status, 201);
    }
    std::vector<std::string> browsed;
    std::string previous_at;
    for (int offset = 0; offset < messages; offset += 8) {
        auto page = c.get("/api/v1/messages?queue=br&limit=8&offset=" + std::to_string(offset));
        ASSERT_EQ(page.status, 200) << page.body;
        const json body = json::parse(page.body);
        for (const auto& m : body["messages"]) {
            browsed.push_back(m["transactionId"]);
            const std::string at = m["createdAt"];
            if (!previous_at.empty()) {
                EXPECT_LE(at, previous_at) << "newest first";
            }
            previous_at = at;
            auto traced = c.post("/api/v1/traces", json{{"transactionId", m["transactionId"]},
                                                       {"partitionId", m["partitionId"]},
                                                       {"data", {{"seen", true}}},
                                                       {"traceNames", json::array({"audit"})}});
            ASSERT_EQ(traced.status, 201) << traced.body;
        }
    }
    std::vector<std::string> expected;
    for (int i = messages - 1; i >= 0; --i) expected.push_back("br-" + std::to_string(i));
    EXPECT_EQ(browsed, expected) << "each message once, newest first";

    auto names = c.get("/api/v1/traces/names");
    ASSERT_EQ(names.status, 200) << names.body;
    const json listed = json::parse(names.body);
    EXPECT_EQ(listed["total"], 1);
    EXPECT_EQ(listed["trace_names"][0]["count"], messages);
    std::set<std::string> traced;
    for (int offset = 0; offset < messages; offset += 6) {
        auto page = c.get("/api/v1/traces/by-name/audit?limit=6&offset=" + std::to_string(offset));
        ASSERT_EQ(page.status, 200) << page.body;
        const json body = json::parse(page.body);
        EXPECT_EQ(body["total"], messages);
        for (const auto& t : body["traces"]) EXPECT_TRUE(traced.insert(t["transactionId"].get<std::string>()).second);
    }
    EXPECT_EQ(static_cast<int>(traced.size()), messages);
    EXPECT_EQ(d.sum_on_shards("SELECT count(*) FROM queen.message_traces"), messages);
}

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
    auto refreshed = c.post("/api/v1/stats/refresh", json::object());
    ASSERT_EQ(refreshed.status, 200) << refreshed.body;

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
