// GET /metrics and /metrics/prometheus through a real broker (docs/metrics.md): a known
// workload moves each counter by exactly its events, the snapshot gauges show the backlog,
// queues past QUEEN_METRICS_MAX_QUEUES are summed as __other__, and `promtool check metrics`
// accepts a scrape taken while pushes and pops run.
#include "prometheus_samples.hpp"
#include "shell_command.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;
std::string scrape(http_client& c) {
    auto r = c.get("/metrics/prometheus");
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    return r.body;
}

// The workload, on a broker of its own (snapshot every 200 ms), on queue q with retryLimit 1:
//   push request 1: 3 messages; push request 2: 2 messages and a duplicate of the first;
//   group g pops 4 (a batch of 4) and acks 2 completed, then 1 dlq, then 1 failed (a retry);
//   the queue-mode consumer pops the 5 with autoAck; then one empty pop.
class Metrics : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        db = new test_cluster();
        b = new broker_process(db->conninfo(), {{"QUEEN_STATS_INTERVAL_MS", "200"}});
        auto c = client_of(*b);
        ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retryLimit", 1}, {"retryDelay", 0}}}})
                      .status,
                  200);
        auto first = c.post("/api/v1/push", json{{"items", {{{"queue", q}, {"transactionId", "t1"}, {"payload", 1}},
                                                            {{"queue", q}, {"transactionId", "t2"}, {"payload", 2}},
                                                            {{"queue", q}, {"transactionId", "t3"}, {"payload", 3}}}}});
        ASSERT_EQ(first.status, 201) << first.body;
        auto second = c.post("/api/v1/push", json{{"items", {{{"queue", q}, {"transactionId", "t4"}, {"payload", 4}},
                                                             {{"queue", q}, {"transactionId", "t5"}, {"payload", 5}},
                                                             {{"queue", q}, {"transactionId", "t1"}, {"payload", 1}}}}});
        ASSERT_EQ(second.status, 201) << second.body;
        ASSERT_EQ(second.json()[2]["status"], "duplicate");
        auto popped = pop(c, q, "batch=4&consumerGroup=g");
        ASSERT_EQ(popped.status, 200) << popped.body;
        const auto msgs = popped.json()["messages"];
        ASSERT_EQ(msgs.size(), 4u);
        const char* statuses[] = {"completed", "completed", "dlq", "failed"};
        json acks = json::array();
        for (std::size_t i = 0; i < 4; ++i)
            acks.push_back({{"transactionId", msgs[i]["transactionId"]}, {"partitionId", msgs[i]["partitionId"]},
                            {"leaseId", msgs[i]["leaseId"]}, {"status", statuses[i]}, {"consumerGroup", "g"},
                            {"error", i < 2 ? json() : json("boom")}});
        auto acked = c.post("/api/v1/ack/batch", json{{"acknowledgments", acks}, {"consumerGroup", "g"}});
        ASSERT_EQ(acked.status, 200) << acked.body;
        for (const auto& a : acked.json()) ASSERT_EQ(a["success"], true) << acked.body;
        auto drained = pop(c, q, "batch=10&autoAck=true");
        ASSERT_EQ(drained.status, 200) << drained.body;
        ASSERT_EQ(drained.json()["messages"].size(), 5u);
        ASSERT_EQ(pop(c, q, "autoAck=true").status, 204);
    }
    static void TearDownTestSuite() {
        delete b;
        delete db;
    }

    static inline test_cluster* db = nullptr;
    static inline broker_process* b = nullptr;
    static inline const std::string q = unique_name("metrics");
};

TEST_F(Metrics, TheWorkloadMovesEachCounterByItsEvents) {
    auto c = client_of(*b);
    const auto s = parse_exposition(scrape(c));
    EXPECT_EQ(value_of(s, "queen_messages_published_total", {{"queue", q}}), 5);
    EXPECT_EQ(value_of(s, "queen_messages_duplicate_total", {{"queue", q}}), 1);
    EXPECT_EQ(value_of(s, "queen_messages_delivered_total", {{"queue", q}, {"consumer_group", "g"}}), 4);
    EXPECT_EQ(value_of(s, "queen_messages_delivered_total", {{"queue", q}, {"consumer_group", "__QUEUE_MODE__"}}), 5);
    EXPECT_EQ(value_of(s, "queen_messages_acked_total", {{"queue", q}, {"consumer_group", "g"}}), 2);
    EXPECT_EQ(value_of(s, "queen_messages_acked_total", {{"queue", q}, {"consumer_group", "__QUEUE_MODE__"}}), 5);
    EXPECT_EQ(value_of(s, "queen_messages_nacked_total", {{"queue", q}, {"consumer_group", "g"}, {"status", "failed"}}),
              1);
    EXPECT_EQ(value_of(s, "queen_messages_dead_lettered_total",
                       {{"queue", q}, {"consumer_group", "g"}, {"reason", "dlq"}}),
              1);
    EXPECT_EQ(value_of(s, "queen_pops_total", {{"queue", q}, {"result", "messages"}}), 2);
    EXPECT_EQ(value_of(s, "queen_pops_total", {{"queue", q}, {"result", "empty"}}), 1);
    EXPECT_EQ(value_of(s, "queen_http_requests_total", {{"route", "/api/v1/push"}, {"method", "POST"}, {"status", "201"}}),
              2);
    EXPECT_EQ(value_of(s, "queen_http_requests_total",
                       {{"route", "/api/v1/pop/queue/:queue"}, {"method", "GET"}, {"status", "204"}}),
              1);
    EXPECT_EQ(value_of(s, "queen_http_request_duration_seconds_count", {{"route", "/api/v1/push"}}), 2);
    EXPECT_EQ(value_of(s, "queen_push_fusion_batch_items_sum", {}), 6);
    EXPECT_GT(value_of(s, "queen_db_pool_size", {}).value_or(0), 0);
    EXPECT_EQ(value_of(s, "queen_db_listen_connected", {}), 1);
    EXPECT_GT(value_of(s, "queen_process_resident_memory_bytes", {}).value_or(0), 0);
    EXPECT_EQ(value_of(s, "queen_maintenance_mode_enabled", {}), 0);
    const auto codec = std::getenv("QUEEN_TEST_EXTENSION") ? "zstd" : "raw";
    bool build_info = false;
    for (const auto& x : s)
        if (x.name == "queen_build_info" && x.label.at("codec") == codec && !x.label.at("version").empty()) build_info = true;
    EXPECT_TRUE(build_info) << "no queen_build_info with codec " << codec;
}

TEST_F(Metrics, SnapshotGaugesShowTheBacklogAndTheClusterTotals) {
    auto c = client_of(*b);
    // g committed 2 and dead-lettered the third (its cursor passes it); the fourth failed and is
    // ready again, with the fifth it never popped: 2 ready. The queue mode consumed all 5.
    std::vector<sample> s;
    ASSERT_TRUE(eventually([&] {
        s = parse_exposition(scrape(c));
        // A snapshot (or a cached scrape) taken during the workload lacks the queue mode.
        return value_of(s, "queen_queue_messages_ready", {{"queue", q}, {"consumer_group", "g"}}) == 2 &&
               value_of(s, "queen_consumer_lag_messages", {{"queue", q}, {"consumer_group", "__QUEUE_MODE__"}}) &&
               value_of(s, "queen_cluster_push_requests_total", {{"scope", "cluster"}}).has_value();
    }, std::chrono::seconds(30)))
        << "no snapshot gauges for " << q;
    EXPECT_EQ(value_of(s, "queen_consumer_lag_messages", {{"queue", q}, {"consumer_group", "g"}}), 2);
    EXPECT_EQ(value_of(s, "queen_queue_messages_leased", {{"queue", q}, {"consumer_group", "g"}}), 0);
    EXPECT_EQ(value_of(s, "queen_consumer_lag_messages", {{"queue", q}, {"consumer_group", "__QUEUE_MODE__"}}), 0);
    EXPECT_EQ(value_of(s, "queen_queue_partitions", {{"queue", q}}), 1);
    EXPECT_EQ(value_of(s, "queen_dlq_depth_by_queue", {{"queue", q}}), 1);
    EXPECT_EQ(value_of(s, "queen_dlq_depth", {{"scope", "cluster"}}), 1);
    EXPECT_GE(value_of(s, "queen_stats_snapshot_age_seconds", {}).value_or(-1), 0);
    EXPECT_EQ(value_of(s, "queen_file_buffer_db_healthy", {}), 1);
}

TEST_F(Metrics, QueuesPastTheCapAreSummedAsOther) {
    // A broker of its own that labels 2 queues: the first two it sees keep their names, the
    // next two share __other__.
    broker_process capped(db->conninfo(), {{"QUEEN_METRICS_MAX_QUEUES", "2"}});
    auto c = client_of(capped);
    std::vector<std::string> queues;
    for (int i = 0; i < 4; ++i) queues.push_back(unique_name("cap"));
    for (std::size_t i = 0; i < queues.size(); ++i) push_payloads(c, queues[i], "", std::vector<json>(i + 1, json(1)));
    const auto s = parse_exposition(scrape(c));
    EXPECT_EQ(value_of(s, "queen_messages_published_total", {{"queue", queues[0]}}), 1);
    EXPECT_EQ(value_of(s, "queen_messages_published_total", {{"queue", queues[1]}}), 2);
    EXPECT_EQ(value_of(s, "queen_messages_published_total", {{"queue", queues[2]}}), std::nullopt);
    EXPECT_EQ(value_of(s, "queen_messages_published_total", {{"queue", "__other__"}}), 3 + 4);
}

TEST_F(Metrics, ATombstoneIsCountedOnce) {
    auto c = client_of(*b);
    const std::string d = unique_name("deleted");
    push_payloads(c, d, "", {json(1), json(2)});
    auto popped = pop(c, d, "batch=1&consumerGroup=peek");
    ASSERT_EQ(popped.status, 200) << popped.body;
    const auto m = popped.json()["messages"][0];
    const std::string target = "/api/v1/messages/" + m["partitionId"].get<std::string>() + "/" +
                               m["transactionId"].get<std::string>();
    ASSERT_EQ(c.del(target).status, 200);
    ASSERT_EQ(c.del(target).status, 200);  // already deleted: not a second tombstone
    const auto s = parse_exposition(scrape(c));
    EXPECT_EQ(value_of(s, "queen_messages_deleted_total", {{"queue", d}}), 1);
}

TEST_F(Metrics, JsonMetricsCountRequestsAndMessages) {
    auto c = client_of(*b);
    auto r = c.get("/metrics");
    ASSERT_EQ(r.status, 200) << r.body;
    const auto m = r.json();
    EXPECT_GE(m["messages"]["total"].get<long long>(), 5);
    EXPECT_GT(m["requests"]["total"].get<long long>(), 6);
    EXPECT_GT(m["requests"]["rate"].get<double>(), 0);
    EXPECT_GT(m["memory"]["rss"].get<long long>(), 0);
    EXPECT_GT(m["database"]["poolSize"].get<long long>(), 0);
    EXPECT_GE(m["uptime"].get<long long>(), 0);
    EXPECT_TRUE(m["cpu"]["user"].is_number_integer());
}

// The housekeeping leader counts what its rounds removed: retention per queue, and the
// maxWaitTimeSeconds dead letters of a group that does not pop.
TEST(MetricsHousekeeping, RetentionAndExpiryAreCountedPerQueue) {
    test_cluster db;
    broker_process b(db.conninfo(), {{"QUEEN_HOUSEKEEPING_INTERVAL_MS", "200"}});
    auto c = client_of(b);
    const auto kept = unique_name("retained");
    const auto waited = unique_name("maxwait");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", kept}, {"options", {{"retentionEnabled", true}, {"retentionSeconds", 1}}}})
                  .status,
              200);
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", waited}, {"options", {{"maxWaitTimeSeconds", 1}}}}).status, 200);
    ASSERT_EQ(pop(c, waited, "consumerGroup=sleepy").status, 204);
    push_payloads(c, kept, "", {json(1), json(2), json(3)});
    push_payloads(c, waited, "", {json("a"), json("b")});
    std::vector<sample> s;
    EXPECT_TRUE(eventually([&] {
        s = parse_exposition(scrape(c));
        return value_of(s, "queen_retention_removed_messages_total", {{"queue", kept}, {"kind", "retention"}}) == 3 &&
               value_of(s, "queen_messages_dead_lettered_total",
                        {{"queue", waited}, {"consumer_group", "sleepy"}, {"reason", "expired"}}) == 2;
    })) << scrape(c);
    EXPECT_EQ(db.run_sql("SELECT count(*) FROM queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id WHERE q.name = " +
                         quote(waited) + " AND reason = 'expired'"),
              "2");
}

// A pop that takes over expired leases counts them, the offsets it hands out again, and the
// head it dead-letters (reason lease_expired) when the takeover exhausts retryLimit; a pop
// that finds messages past maxWaitTimeSeconds counts them as dead-lettered (reason expired).
// A replay after a seek is not a redelivery.
TEST(MetricsPop, TakeoversRedeliveriesAndDeadLettersOfAClaimAreCounted) {
    test_cluster db;
    broker_process b(db.conninfo(), {{"QUEEN_HOUSEKEEPING_INTERVAL_MS", "3600000"}});
    auto c = client_of(b);
    const auto q = unique_name("takeover");
    const auto waited = unique_name("popexpiry");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"leaseTime", 1}, {"retryLimit", 1}}}}).status,
              200);
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", waited}, {"options", {{"maxWaitTimeSeconds", 1}}}}).status, 200);
    push_payloads(c, q, "", {json(1), json(2), json(3)});
    push_payloads(c, waited, "", {json("a"), json("b")});
    const labels qg{{"queue", q}, {"consumer_group", "g"}};

    ASSERT_EQ(pop(c, q, "batch=3&consumerGroup=g").json()["messages"].size(), 3u);
    auto s = parse_exposition(scrape(c));
    EXPECT_EQ(value_of(s, "queen_leases_expired_total", qg), std::nullopt);
    EXPECT_EQ(value_of(s, "queen_messages_redelivered_total", qg), std::nullopt);

    // The lease expires: the next pop takes it over (attempt 1 of the head) and hands out all 3 again.
    http_reply again;
    ASSERT_TRUE(eventually([&] {
        again = pop(c, q, "batch=3&consumerGroup=g");
        return again.status == 200;
    })) << again.body;
    ASSERT_EQ(again.json()["messages"].size(), 3u);
    s = parse_exposition(scrape(c));
    EXPECT_EQ(value_of(s, "queen_leases_expired_total", qg), 1);
    EXPECT_EQ(value_of(s, "queen_messages_redelivered_total", qg), 3);
    EXPECT_EQ(value_of(s, "queen_messages_delivered_total", qg), 6);

    // Expired again: attempt 2 exceeds retryLimit 1, so the head is dead-lettered and 2, 3 come again.
    http_reply third;
    ASSERT_TRUE(eventually([&] {
        third = pop(c, q, "batch=3&consumerGroup=g");
        return third.status == 200;
    })) << third.body;
    const auto msgs = third.json()["messages"];
    ASSERT_EQ(msgs.size(), 2u);
    EXPECT_EQ(msgs[0]["data"], 2);
    s = parse_exposition(scrape(c));
    EXPECT_EQ(value_of(s, "queen_leases_expired_total", qg), 2);
    EXPECT_EQ(value_of(s, "queen_messages_redelivered_total", qg), 5);
    EXPECT_EQ(value_of(s, "queen_messages_dead_lettered_total",
                       {{"queue", q}, {"consumer_group", "g"}, {"reason", "lease_expired"}}),
              1);
    EXPECT_EQ(db.run_sql("SELECT count(*) FROM queen.dead_letters WHERE reason = 'lease_expired'"), "1");
    json acks = json::array();
    for (const auto& m : msgs)
        acks.push_back({{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                        {"leaseId", m["leaseId"]}, {"status", "completed"}, {"consumerGroup", "g"}});
    ASSERT_EQ(c.post("/api/v1/ack/batch", json{{"acknowledgments", acks}, {"consumerGroup", "g"}}).status, 200);

    // A seek back to the start replays all 3: delivered, not redelivered.
    ASSERT_EQ(c.post("/api/v1/consumer-groups/g/queues/" + q + "/seek", json{{"timestamp", "1970-01-01T00:00:00Z"}})
                  .status,
              200);
    ASSERT_EQ(pop(c, q, "batch=3&consumerGroup=g&autoAck=true").json()["messages"].size(), 3u);
    s = parse_exposition(scrape(c));
    EXPECT_EQ(value_of(s, "queen_messages_delivered_total", qg), 11);
    EXPECT_EQ(value_of(s, "queen_messages_redelivered_total", qg), 5);

    // Housekeeping does not run here (its interval is an hour): the pop itself finds both
    // messages past maxWaitTimeSeconds, dead-letters them and answers empty.
    http_reply expired;
    ASSERT_TRUE(eventually([&] {
        expired = pop(c, waited, "consumerGroup=late");
        s = parse_exposition(scrape(c));
        return value_of(s, "queen_messages_dead_lettered_total",
                        {{"queue", waited}, {"consumer_group", "late"}, {"reason", "expired"}}) == 2;
    })) << scrape(c);
    EXPECT_EQ(expired.status, 204);
    EXPECT_EQ(db.run_sql("SELECT count(*) FROM queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id WHERE q.name = " +
                         quote(waited) + " AND reason = 'expired' AND consumer_group = 'late'"),
              "2");
}

// With PostgreSQL stopped a scrape still answers 200: the in-process families, no database
// families (stale gauges would mislead), queen_file_buffer_db_healthy 0; they return with it.
TEST(MetricsOutage, AScrapeAnswersWithoutTheDatabase) {
    test_cluster db;
    broker_process b(db.conninfo(), {{"QUEEN_STATS_INTERVAL_MS", "200"}});
    auto c = client_of(b);
    push_payloads(c, unique_name("outage"), "", {json(1)});
    ASSERT_TRUE(eventually([&] {
        return value_of(parse_exposition(scrape(c)), "queen_stats_snapshot_age_seconds", {}).has_value();
    }, std::chrono::seconds(30)));
    db.stop();
    std::vector<sample> s;
    EXPECT_TRUE(eventually([&] {
        s = parse_exposition(scrape(c));  // the cached database part expires within 5 s
        return value_of(s, "queen_file_buffer_db_healthy", {}) == 0;
    }, std::chrono::seconds(40)));
    EXPECT_EQ(value_of(s, "queen_stats_snapshot_age_seconds", {}), std::nullopt);
    EXPECT_EQ(value_of(s, "queen_cluster_push_requests_total", {{"scope", "cluster"}}), std::nullopt);
    EXPECT_TRUE(value_of(s, "queen_uptime_seconds", {}).has_value());
    db.start();
    EXPECT_TRUE(eventually([&] {
        s = parse_exposition(scrape(c));
        return value_of(s, "queen_file_buffer_db_healthy", {}) == 1 &&
               value_of(s, "queen_cluster_push_requests_total", {{"scope", "cluster"}}).has_value();
    }, std::chrono::seconds(40)));
}

// promtool from Debian's prometheus package must accept a scrape taken under load.
TEST(MetricsPromtool, AcceptsAScrapeTakenDuringLoad) {
    ASSERT_EQ(std::system("command -v promtool > /dev/null"), 0)
        << "promtool is missing: scripts/install-deps.sh installs Debian's prometheus package";
    const std::string q = unique_name("promload");
    std::atomic<bool> stop{false};
    std::atomic<int> rounds{0};
    std::thread load([&] {
        auto c = client();
        for (int i = 0; !stop; ++i) {
            push_payloads(c, q, "p" + std::to_string(i % 4), {json(1), json(2)});
            pop(c, q, "batch=2&autoAck=true");
            ++rounds;
        }
    });
    auto c = client();
    EXPECT_TRUE(eventually([&] { return rounds >= 3; }));
    std::string text;
    for (int i = 0; i < 5; ++i) text = scrape(c);  // the load goes on meanwhile
    stop = true;
    load.join();
    const std::string path = "/tmp/queen-promtool-" + std::to_string(::getpid()) + ".txt";
    std::ofstream(path) << text;
    const std::string cmd = "promtool check metrics < " + path + " 2>&1";
    const shell_result check = run_shell(cmd);
    std::remove(path.c_str());
    EXPECT_EQ(check.status, 0) << check.out;
    EXPECT_NE(text.find("queen_messages_published_total{queue=\"" + q + "\"}"), std::string::npos);
}

}  // namespace
}  // namespace queen::test
