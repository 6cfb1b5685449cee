// The status and analytics routes through a real broker (docs/status-and-analytics.md): a
// known workload on a fresh database must show up exactly in the per-minute activity rows
// (queen.broker_metrics, queue_metrics, metrics_totals) and in /api/v1/status, /status/queues,
// /status/queues/:queue, /status/analytics, /status/buffers and /api/v1/analytics/*; the last
// minute is flushed at shutdown; retention runs are recorded; bad windows get 400.
#include "test_env.hpp"

#include <gtest/gtest.h>

namespace queen::test {
namespace {

using nlohmann::json;

// Σ of one integer field over the rows of an array.
long long sum_of(const json& rows, const char* field) {
    long long n = 0;
    for (const auto& r : rows)
        if (r[field].is_number_integer()) n += r[field].get<long long>();
    return n;
}

// One broker on its own database, flushing its counts every 200 ms and refreshing the
// snapshot every 200 ms. The workload on queue q (namespace ns, task tk, retryLimit 0):
//   push request 1: p1 × 5; push request 2: p2 × 3 and a duplicate of p2's first (not stored);
//   a transaction that pushes 1 to p3;
//   one pop of 3 from p1; a batch ack of those 3: 2 completed, 1 failed (dead-lettered);
//   one pop of an empty queue e (204).
// So: 9 messages stored, 3 push requests, 3 popped, 2 + 1 acks in one ack request, 1 dead
// letter, 1 transaction, 1 empty pop.
class Status : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        db = new test_cluster();
        b = new broker_process(db->conninfo(),
                               {{"QUEEN_METRICS_FLUSH_MS", "200"}, {"QUEEN_STATS_INTERVAL_MS", "200"}});
        auto c = client_of(*b);
        ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"namespace", ns}, {"task", tk},
                                                   {"options", {{"retryLimit", 0}, {"retryDelay", 0}}}})
                      .status,
                  200);
        push_payloads(c, q, "p1", {json(1), json(2), json(3), json(4), json(5)});
        auto r = c.post("/api/v1/push", json{{"items", {{{"queue", q}, {"partition", "p2"}, {"transactionId", "a"}, {"payload", 1}},
                                                        {{"queue", q}, {"partition", "p2"}, {"transactionId", "b"}, {"payload", 2}},
                                                        {{"queue", q}, {"partition", "p2"}, {"transactionId", "c"}, {"payload", 3}},
                                                        {{"queue", q}, {"partition", "p2"}, {"transactionId", "a"}, {"payload", 1}}}}});
        ASSERT_EQ(r.status, 201) << r.body;
        ASSERT_EQ(r.json()[3]["status"], "duplicate");
        auto tx = c.post("/api/v1/transaction",
                         json{{"operations", json::array({{{"type", "push"},
                                                           {"items", {{{"queue", q}, {"partition", "p3"}, {"payload", 9}}}}}})}});
        ASSERT_EQ(tx.status, 200) << tx.body;
        ASSERT_EQ(tx.json()["success"], true) << tx.body;
        auto popped = pop(c, q, "batch=3", "p1");
        ASSERT_EQ(popped.status, 200) << popped.body;
        const auto msgs = popped.json()["messages"];
        ASSERT_EQ(msgs.size(), 3u);
        json acks = json::array();
        for (std::size_t i = 0; i < 3; ++i)
            acks.push_back({{"transactionId", msgs[i]["transactionId"]}, {"partitionId", msgs[i]["partitionId"]},
                            {"leaseId", msgs[i]["leaseId"]}, {"status", i < 2 ? "completed" : "failed"},
                            {"error", i < 2 ? json() : json("boom")}});
        auto acked = c.post("/api/v1/ack/batch", json{{"acknowledgments", acks}});
        ASSERT_EQ(acked.status, 200) << acked.body;
        for (const auto& a : acked.json()) ASSERT_EQ(a["success"], true) << acked.body;
        ASSERT_EQ(pop(c, e).status, 204);
        // Every count is in the database once the totals show the last event, and the gauges
        // (sampled once a second) once every minute row has a sample.
        ASSERT_TRUE(eventually([] {
            return sql_int(*db, "SELECT ack_failed FROM queen.metrics_totals") == 1 &&
                   sql_int(*db, "SELECT pop_empty FROM queen.queue_metrics WHERE queue_name = " + quote(e)) == 1 &&
                   sql_int(*db, "SELECT count(*) FROM queen.broker_metrics WHERE coalesce((pool_size).n, 0) = 0") == 0;
        }));
    }
    static void TearDownTestSuite() {
        delete b;
        delete db;
    }

    static inline test_cluster* db = nullptr;
    static inline broker_process* b = nullptr;
    static inline const std::string q = unique_name("st");
    static inline const std::string e = unique_name("st-empty");
    static inline const std::string ns = unique_name("ns");
    static inline const std::string tk = unique_name("tk");
    http_client c = client_of(*b);
};

TEST_F(Status, TheWorkloadIsCountedExactlyInTheActivityTables) {
    EXPECT_EQ(sql_int(*db, "SELECT push_messages FROM queen.metrics_totals"), 9);
    EXPECT_EQ(sql_int(*db, "SELECT push_requests FROM queen.metrics_totals"), 3);
    EXPECT_EQ(sql_int(*db, "SELECT pop_messages FROM queen.metrics_totals"), 3);
    EXPECT_EQ(sql_int(*db, "SELECT ack_messages FROM queen.metrics_totals"), 3);
    EXPECT_EQ(sql_int(*db, "SELECT ack_success FROM queen.metrics_totals"), 2);
    EXPECT_EQ(sql_int(*db, "SELECT dead_lettered FROM queen.metrics_totals"), 1);
    EXPECT_EQ(sql_int(*db, "SELECT transaction_requests FROM queen.metrics_totals"), 1);
    const std::string of_q = " FROM queen.queue_metrics WHERE queue_name = " + quote(q);
    EXPECT_EQ(sql_int(*db, "SELECT sum(push_messages)" + of_q), 9);
    EXPECT_EQ(sql_int(*db, "SELECT sum(push_requests)" + of_q), 3);
    EXPECT_EQ(sql_int(*db, "SELECT sum(pop_messages)" + of_q), 3);
    EXPECT_EQ(sql_int(*db, "SELECT sum(ack_success)" + of_q), 2);
    EXPECT_EQ(sql_int(*db, "SELECT sum(ack_failed)" + of_q), 1);
    EXPECT_EQ(sql_int(*db, "SELECT sum(transactions)" + of_q), 1);
    EXPECT_EQ(sql_int(*db, "SELECT sum(pop_lag_count)" + of_q), 3);
    // The broker's own rows: one per minute it ran, with 1 s samples of its gauges.
    EXPECT_EQ(sql_int(*db, "SELECT sum(push_messages) FROM queen.broker_metrics"), 9);
    EXPECT_TRUE(eventually([&] { return sql_int(*db, "SELECT max((cpu_user).n) FROM queen.broker_metrics") > 0; }));
    EXPECT_EQ(sql_int(*db, "SELECT count(DISTINCT port) FROM queen.broker_metrics"), 1);
    EXPECT_EQ(sql_int(*db, "SELECT max(port) FROM queen.broker_metrics"), b->port());
}

TEST_F(Status, StatusShowsTheTotalsTheThroughputAndTheBroker) {
    json s;
    // pending, processing, the queue's consumed count and the dead letters come from the stats
    // snapshot, which trails the workload; an earlier snapshot (taken between the pop and the
    // ack) already shows pending 6 but still 3 processing, so wait for the one after the ack.
    ASSERT_TRUE(eventually([&] {
        s = get_ok(c, "/api/v1/status");
        return s["messages"]["pending"] == 6 && s["messages"]["processing"] == 0 &&
               s["deadLetterQueue"]["totalMessages"] == 1 && s["queues"].size() == 1 &&
               s["queues"][0]["totalConsumed"] == 3;
    })) << s.dump();
    EXPECT_EQ(s["messages"]["total"], 9);
    EXPECT_EQ(s["messages"]["processing"], 0);
    EXPECT_EQ(s["messages"]["completed"], 2);
    EXPECT_EQ(s["messages"]["failed"], 1);
    EXPECT_EQ(s["messages"]["deadLetter"], 1);
    EXPECT_EQ(s["messages"]["requests"], (json{{"push", 3}, {"pop", 2}, {"ack", 1}}));
    EXPECT_EQ(s["messages"]["batchEfficiency"]["push"], 3.0);
    EXPECT_EQ(s["messages"]["batchEfficiency"]["ack"], 3.0);
    EXPECT_EQ(s["bucketMinutes"], 1);
    EXPECT_EQ(s["pointCount"], s["throughput"].size());
    EXPECT_EQ(sum_of(s["throughput"], "ingested"), 9);
    EXPECT_EQ(sum_of(s["throughput"], "processed"), 3);
    EXPECT_EQ(sum_of(s["throughput"], "popMessages"), 3);
    EXPECT_EQ(sum_of(s["throughput"], "ackFailed"), 1);
    EXPECT_EQ(sum_of(s["throughput"], "dlqCount"), 1);
    bool lag_seen = false;
    for (const auto& row : s["throughput"]) {
        if (row["popMessages"] > 0) {
            lag_seen = true;
            EXPECT_TRUE(row["avgLagMs"].is_number_integer()) << row.dump();
            EXPECT_GE(row["maxLagMs"].get<long long>(), row["avgLagMs"].get<long long>());
        }
        EXPECT_TRUE(row["timestamp"].get<std::string>().ends_with(":00.000000Z")) << row.dump();
        EXPECT_TRUE(row["dbPoolSize"].is_number()) << row.dump();
    }
    EXPECT_TRUE(lag_seen);
    // Newest bucket first.
    for (std::size_t i = 1; i < s["throughput"].size(); ++i)
        EXPECT_GT(s["throughput"][i - 1]["timestamp"].get<std::string>(), s["throughput"][i]["timestamp"].get<std::string>());
    ASSERT_EQ(s["queues"].size(), 1u) << s["queues"].dump();  // e holds no message
    EXPECT_EQ(s["queues"][0]["name"], q);
    EXPECT_EQ(s["queues"][0]["totalConsumed"], 3);
    EXPECT_EQ(s["deadLetterQueue"]["totalMessages"], 1);
    EXPECT_EQ(s["deadLetterQueue"]["affectedPartitions"], 1);
    ASSERT_EQ(s["deadLetterQueue"]["topErrors"].size(), 1u);
    EXPECT_EQ(s["deadLetterQueue"]["topErrors"][0], (json{{"error", "boom"}, {"count", 1}}));
    EXPECT_EQ(s["errors"]["ackFailed"], 1);
    EXPECT_EQ(s["errors"]["dlqMessages"], 1);
    ASSERT_EQ(s["workers"].size(), 1u);
    EXPECT_EQ(s["workers"][0]["port"], b->port());
    EXPECT_EQ(s["workers"][0]["messagesProcessed"], 12);  // 9 pushed + 3 acknowledged
    EXPECT_EQ(s["leases"]["active"], 0);
    EXPECT_GE(s["statsAge"].get<int>(), 0);

    // A filter on another queue counts nothing of q's.
    auto other = get_ok(c, "/api/v1/status?queue=" + e);
    EXPECT_EQ(sum_of(other["throughput"], "ingested"), 0);
    EXPECT_EQ(other["queues"].size(), 0u);
    auto by_ns = get_ok(c, "/api/v1/status?namespace=" + ns);
    EXPECT_EQ(sum_of(by_ns["throughput"], "ingested"), 9);
    EXPECT_EQ(by_ns["messages"]["total"], 9);
    EXPECT_EQ(by_ns["messages"]["requests"]["push"], 3);
}

TEST_F(Status, QueueListAndQueueDetail) {
    json list;
    // A snapshot taken after the acks (one taken between the pushes and them counts none completed).
    ASSERT_TRUE(eventually([&] {
        list = get_ok(c, "/api/v1/status/queues?namespace=" + ns);
        return list["queues"].size() == 1 && list["queues"][0]["messages"]["total"] == 9 &&
               list["queues"][0]["messages"]["completed"] == 3;
    })) << list.dump();
    EXPECT_EQ(list["queues"][0]["messages"], (json{{"total", 9}, {"pending", 6}, {"processing", 0}, {"completed", 3}}));
    EXPECT_EQ(list["pagination"], (json{{"limit", 100}, {"offset", 0}}));
    EXPECT_EQ(get_ok(c, "/api/v1/status/queues?queue=" + q)["queues"].size(), 1u);

    auto d = get_ok(c, "/api/v1/status/queues/" + q);
    EXPECT_EQ(d["queue"]["name"], q);
    EXPECT_EQ(d["queue"]["namespace"], ns);
    EXPECT_EQ(d["queue"]["config"]["retryLimit"], 0);
    EXPECT_EQ(d["queue"]["config"]["leaseTime"], 300);
    ASSERT_EQ(d["partitions"].size(), 4u);  // Default, p1, p2, p3 by name
    EXPECT_EQ(d["partitions"][1]["name"], "p1");
    EXPECT_EQ(d["partitions"][1]["messages"],
              (json{{"total", 5}, {"pending", 2}, {"processing", 0}, {"completed", 3}, {"failed", 0}, {"deadLetter", 1}}));
    EXPECT_EQ(d["partitions"][1]["cursor"]["totalConsumed"], 3);
    EXPECT_TRUE(d["partitions"][1]["lastActivity"].is_string());
    EXPECT_TRUE(d["partitions"][2]["lastActivity"].is_null());
    EXPECT_EQ(d["totals"]["messages"],
              (json{{"total", 9}, {"pending", 6}, {"processing", 0}, {"completed", 3}, {"failed", 0}, {"deadLetter", 1}}));
    EXPECT_EQ(d["totals"]["total"], 9);

    auto missing = c.get("/api/v1/status/queues/" + unique_name("none"));
    EXPECT_EQ(missing.status, 404);
    EXPECT_EQ(missing.json(), (json{{"error", "Queue not found"}}));
}

TEST_F(Status, AnalyticsCountsPerIntervalZeroFilled) {
    auto a = get_ok(c, "/api/v1/status/analytics?interval=minute&queue=" + q);
    EXPECT_EQ(a["interval"], "minute");
    EXPECT_EQ(sum_of(a["dataPoints"], "messages"), 9);
    // One point per minute of the default 24 h window, the empty ones as 0, oldest first.
    EXPECT_GE(a["dataPoints"].size(), 1440u);
    EXPECT_LE(a["dataPoints"].size(), 1441u);
    EXPECT_EQ(a["dataPoints"][0]["messages"], 0);
    EXPECT_LT(a["dataPoints"][0]["timestamp"].get<std::string>(), a["dataPoints"][1]["timestamp"].get<std::string>());
    EXPECT_EQ(sum_of(get_ok(c, "/api/v1/status/analytics")["dataPoints"], "messages"), 9);
    EXPECT_EQ(get_ok(c, "/api/v1/status/analytics")["dataPoints"].size(), 25u);  // hours, both ends
}

TEST_F(Status, BuffersShowAnEmptySpoolAndAHealthyDatabase) {
    EXPECT_EQ(get_ok(c, "/api/v1/status/buffers"),
              (json{{"pending", 0}, {"failed", 0}, {"dbHealthy", true}, {"worker", 0}, {"spoolBytes", 0}}));
}

TEST_F(Status, AnalyticsRoutesShowTheWorkload) {
    auto ops = get_ok(c, "/api/v1/analytics/queue-ops?queue=" + q);
    EXPECT_EQ(ops["queues"], json::array({q}));
    EXPECT_EQ(sum_of(ops["series"], "pushMessages"), 9);
    EXPECT_EQ(sum_of(ops["series"], "popMessages"), 3);
    EXPECT_EQ(sum_of(ops["series"], "ackSuccess"), 2);
    EXPECT_EQ(sum_of(ops["series"], "ackFailed"), 1);
    EXPECT_EQ(sum_of(ops["series"], "transactions"), 1);
    // The snapshot's partition count reaches queue_metrics on the next refresh.
    ASSERT_TRUE(eventually([&] {
        ops = get_ok(c, "/api/v1/analytics/queue-ops?queue=" + q);
        long long most = 0;
        for (const auto& row : ops["series"])
            if (row["partitionCount"].is_number_integer()) most = std::max(most, row["partitionCount"].get<long long>());
        return most == 4 && sum_of(ops["series"], "partitionsCreated") == 4;
    })) << ops.dump();
    EXPECT_EQ(sum_of(get_ok(c, "/api/v1/analytics/queue-ops?queue=" + e)["series"], "popEmpty"), 1);

    auto lag = get_ok(c, "/api/v1/analytics/queue-lag?queue=" + q);
    ASSERT_TRUE(lag.is_array());
    EXPECT_EQ(sum_of(lag, "popCount"), 3);

    auto workers = get_ok(c, "/api/v1/analytics/worker-metrics");
    EXPECT_EQ(workers["summary"]["totalPushMessages"], 9);
    EXPECT_EQ(workers["summary"]["totalAckMessages"], 3);
    EXPECT_EQ(workers["summary"]["totalDlq"], 1);
    EXPECT_EQ(sum_of(workers["timeSeries"], "pushMessages"), 9);
    EXPECT_GT(sum_of(workers["timeSeries"], "jobsDone"), 0);
    ASSERT_EQ(workers["workers"].size(), 1u);
    bool q_listed = false;
    for (const auto& row : workers["queues"])
        if (row["queueName"] == q) q_listed = row["popCount"] == 3;
    EXPECT_TRUE(q_listed) << workers["queues"].dump();

    auto sys = get_ok(c, "/api/v1/analytics/system-metrics");
    ASSERT_EQ(sys["replicaCount"], 1);
    EXPECT_EQ(sys["replicas"][0]["port"], b->port());
    const auto& point = sys["replicas"][0]["timeSeries"][0];
    EXPECT_GT(point["sampleCount"].get<long long>(), 0);
    EXPECT_GT(point["metrics"]["memory"]["rss_bytes"]["max"].get<double>(), 0);
    EXPECT_EQ(point["metrics"]["database"]["pool_size"]["max"].get<double>(), 4.0);

    auto parked = get_ok(c, "/api/v1/analytics/queue-parked-replicas?queue=" + q);
    EXPECT_TRUE(parked["series"].is_array());
    auto retention = get_ok(c, "/api/v1/analytics/retention?queue=" + q);
    EXPECT_EQ(retention["totals"]["totalMsgs"], 0);
}

TEST_F(Status, OverviewShowsLifetimeTotalsLagAndThroughput) {
    json o;
    ASSERT_TRUE(eventually([&] {
        o = get_ok(c, "/api/v1/resources/overview");
        // A snapshot taken between the pop and the ack shows pending 6 with 3 processing.
        return o["messages"]["pending"] == 6 && o["messages"]["processing"] == 0 && o["partitions"] == 4;
    })) << o.dump();
    EXPECT_EQ(o["queues"], 1);  // a pop does not create e
    EXPECT_EQ(o["namespaces"], 1);
    EXPECT_EQ(o["tasks"], 1);
    EXPECT_EQ(o["messages"], (json{{"total", 9}, {"pending", 6}, {"processing", 0}, {"completed", 2}, {"failed", 1},
                                   {"deadLetter", 1}}));
    EXPECT_TRUE(o["lag"]["time"]["avg"].is_number()) << o.dump();
    EXPECT_GE(o["lag"]["time"]["max"].get<double>(), o["lag"]["time"]["avg"].get<double>());
    // Queue mode has a cursor on every partition of q: p2's is 3 behind its head, the most.
    EXPECT_EQ(o["lag"]["offset"]["max"], 3);
    EXPECT_EQ(o["throughput"]["ingestedPerSecond"], 0.03);  // 9 / 300
    EXPECT_EQ(o["throughput"]["processedPerSecond"], 0.01);  // 3 / 300
}

TEST_F(Status, PostgresStatsCoverTheQueenSchema) {
    auto p = get_ok(c, "/api/v1/analytics/postgres-stats");
    EXPECT_EQ(p["database"], db->database());
    EXPECT_EQ(p["databaseCache"]["database"], db->database());
    EXPECT_TRUE(p["databaseCache"]["cacheHits"].is_number_integer());
    bool segments_listed = false;
    for (const auto& t : p["tableSizes"]) {
        if (t["table"] == "log_segments") segments_listed = t["totalSizeBytes"].get<long long>() > 0;
    }
    EXPECT_TRUE(segments_listed) << p["tableSizes"].dump();
    EXPECT_LE(p["indexCache"].size(), 20u);
    EXPECT_LE(p["deadTuples"].size(), 15u);
    for (const auto& t : p["tableCache"]) EXPECT_EQ(t["schema"], "queen");
    EXPECT_TRUE(p["bufferConfig"]["sharedBuffers"].is_string());
    EXPECT_EQ(p["bufferUsage"], json::array());
    EXPECT_TRUE(p["activeQueries"].is_array());
}

TEST_F(Status, BadWindowsAndFiltersAre400AndNameTheParameter) {
    struct bad_case {
        std::string target, says;
    };
    for (const auto& [target, says] : std::vector<bad_case>{
             {"/api/v1/status?from=yesterday", "from"},
             {"/api/v1/status?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "from must not be after to"},
             {"/api/v1/status/analytics?interval=week", "interval"},
             {"/api/v1/status/analytics?interval=minute&from=2020-01-01T00:00:00Z", "at most 10000"},
             {"/api/v1/status/queues?limit=-1", "limit"},
             {"/api/v1/status/queues?offset=x", "offset"},
             {"/api/v1/analytics/queue-ops?to=soon", "to"},
         }) {
        auto r = c.get(target);
        EXPECT_EQ(r.status, 400) << target << ": " << r.body;
        EXPECT_NE(r.json().value("error", "").find(says), std::string::npos) << target << ": " << r.body;
    }
}

TEST(StatusFlush, TheLastMinuteIsFlushedAtShutdown) {
    test_cluster db;
    broker_process broker(db.conninfo(), {{"QUEEN_METRICS_FLUSH_MS", "3600000"}});
    auto c = client_of(broker);
    const auto q = unique_name("flush");
    push_payloads(c, q, "", {json(1), json(2), json(3), json(4)});
    EXPECT_EQ(db.run_sql("SELECT push_messages FROM queen.metrics_totals"), "0");
    broker.terminate();
    EXPECT_EQ(db.run_sql("SELECT push_messages FROM queen.metrics_totals"), "4");
    EXPECT_EQ(db.run_sql("SELECT sum(push_messages) FROM queen.queue_metrics WHERE queue_name = " + quote(q)), "4");
}

TEST(StatusRetention, RetentionRunsAreRecordedPerPartition) {
    test_cluster db;
    broker_process broker(db.conninfo(), {{"QUEEN_METRICS_FLUSH_MS", "200"}, {"QUEEN_HOUSEKEEPING_INTERVAL_MS", "200"}});
    auto c = client_of(broker);
    const auto q = unique_name("kept");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retentionEnabled", true}, {"retentionSeconds", 1}}}})
                  .status,
              200);
    push_payloads(c, q, "a", {json(1), json(2)});
    push_payloads(c, q, "b", {json(3)});
    json r;
    ASSERT_TRUE(eventually([&] {
        r = get_ok(c, "/api/v1/analytics/retention?queue=" + q);
        return r["totals"]["retentionMsgs"] == 3;
    })) << r.dump();
    EXPECT_EQ(r["totals"]["eventCount"], 2);  // two partitions
    EXPECT_EQ(r["totals"]["completedRetentionMsgs"], 0);
    EXPECT_EQ(db.run_sql("SELECT count(*) FROM queen.log_segments"), "0");
}

}  // namespace
}  // namespace queen::test
