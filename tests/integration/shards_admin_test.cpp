// Shards, administration and streams across the shard databases: consumer groups registered,
// sought, listed and deleted on every shard; dead letters listed, requeued and purged; stream
// cycles run on the shard of their source partition; the message browser and traces paged.
//
// A sharded deployment end to end (docs/scaling.md): `queen shards init` over four shard
// databases on two PostgreSQL clusters and a proxy database, a broker started on the proxy.
// Run as their own suite (scripts/run-tests.sh). The other files of the suite:
// shards_delivery, _admin and _deployment_test.cpp.
#include "shards_support.hpp"
#include "sharded_deployment.hpp"
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

}  // namespace
}  // namespace queen::test
