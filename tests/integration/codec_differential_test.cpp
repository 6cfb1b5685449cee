// Differential test of the two codec paths: the same requests against a stock database and
// one with queen_ext give the same answers, byte for byte once ids and times are masked, and
// the databases hold the same messages (only the segments' codec differs).
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace queen::test {
namespace {

using nlohmann::json;

// Masks what legitimately differs between two runs: generated ids, time stamps, and the
// seconds measured from the clock at the time of the request (a lag, the snapshot's age),
// which a run that is a second slower at that step shows one higher.
json masked(const json& j) {
    if (j.is_array()) {
        json out = json::array();
        for (const auto& e : j) out.push_back(masked(e));
        return out;
    }
    if (!j.is_object()) return j;
    json out = json::object();
    for (const auto& [k, v] : j.items()) {
        bool is_time = k.size() > 2 && (k.ends_with("At") || k == "timestamp");
        bool is_elapsed = k == "timeLagSeconds" || k == "lagSeconds" || k == "maxTimeLag" || k == "statsAge";
        // A transactionId the broker generated (a UUID; the scenario's own ids are short).
        bool generated_txid = k == "transactionId" && v.is_string() && v.get<std::string>().size() == 36;
        bool is_id = k == "id" || k == "messageId" || k == "message_id" || k == "leaseId" || k == "queueId" ||
                     generated_txid;
        if ((is_time || is_elapsed || is_id) && !v.is_null()) out[k] = "<masked>";
        else out[k] = masked(v);
    }
    return out;
}

// One step of the scenario: what was asked and what came back (status and masked body).
struct step {
    std::string what;
    std::string answer;
};

class transcript {
public:
    transcript(http_client& c, const test_cluster& db) : c_(c), db_(db) {}

    json post(const std::string& target, const json& body) {
        auto r = c_.post(target, body);
        record("POST " + target, r);
        return r.body.empty() ? json() : r.json();
    }
    json get(const std::string& target) {
        auto r = c_.get(target);
        record("GET " + target, r);
        return r.body.empty() ? json() : r.json();
    }
    void sql(const std::string& query) { steps_.push_back({query, db_.run_sql(query)}); }
    const std::vector<step>& steps() const { return steps_; }

private:
    void record(const std::string& what, const http_reply& r) {
        std::string body = r.body.empty() ? "" : masked(r.json()).dump();
        steps_.push_back({what, std::to_string(r.status) + " " + body});
    }
    http_client& c_;
    const test_cluster& db_;
    std::vector<step> steps_;
};

json item(const std::string& queue, const std::string& partition, const std::string& txid, const json& payload) {
    return json{{"queue", queue}, {"partition", partition}, {"transactionId", txid}, {"payload", payload}};
}

// The scenario: pushes with duplicates and awkward payloads, pops and acks of every kind, a
// consumer group, a transaction, dead letters, the SQL API and SQL introspection.
std::vector<step> run_scenario(const std::string& conninfo, const test_cluster& db) {
    broker_process b(conninfo);
    auto c = client_of(b);
    transcript t(c, db);
    const std::string q = "diff-orders", nodedup = "diff-nodedup";
    t.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retryLimit", 1}, {"retryDelay", 0}, {"dlqAfterMaxRetries", true}}}});
    t.post("/api/v1/configure", json{{"queue", nodedup}, {"options", {{"dedupWindowSeconds", 0}}}});

    json items = json::array();
    for (int i = 0; i < 30; ++i) {
        json payload = {{"order", i}, {"customer", "c-" + std::to_string(i % 7)}, {"lines", json::array({i, i * 2})}};
        if (i == 3) payload = "ünïcödé ✓ \u65e5\u672c";
        if (i == 4) payload = json::parse(R"({"nul":"a\u0000b","deep":{"x":[1,{"y":null}]},"big":12345678901234567890})");
        if (i == 5) payload = std::string(3000, 'x');
        if (i == 6) payload = nullptr;
        json it = item(q, "p1", "t" + std::to_string(i), payload);
        if (i % 5 == 0) it["traceId"] = "00000000-0000-4000-8000-00000000000" + std::to_string(i / 5);
        items.push_back(it);
    }
    t.post("/api/v1/push", json{{"items", items}});
    // Duplicates (earlier push and inside one request) and new ids, across partitions.
    t.post("/api/v1/push", json{{"items", json::array({item(q, "p1", "t5", 0), item(q, "p1", "t30", 30),
                                                       item(q, "p1", "t30", 31), item(q, "p2", "t5", "other partition"),
                                                       item(q, "p3", "a", 1), item(q, "p3", "b", 2)})}});
    t.post("/api/v1/push", json{{"items", json::array({item(nodedup, "Default", "same", 1),
                                                       item(nodedup, "Default", "same", 2)})}});

    // Queue mode on p1: a completed batch, a failed message that is retried, then dead-lettered.
    auto first = t.get("/api/v1/pop/queue/" + q + "/partition/p1?batch=10");
    auto m = first["messages"][9];
    t.post("/api/v1/ack", json{{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                               {"leaseId", m["leaseId"]}, {"status", "completed"}});
    json span;
    for (int round = 0; round < 2; ++round) {
        span = t.get("/api/v1/pop/queue/" + q + "/partition/p1?batch=3");
        auto f = span["messages"][0];
        t.post("/api/v1/ack", json{{"transactionId", f["transactionId"]}, {"partitionId", f["partitionId"]},
                                   {"leaseId", f["leaseId"]}, {"status", "failed"}, {"error", "boom"}});
    }
    auto end = span["messages"].back();  // the rest of the span after the dead letter
    t.post("/api/v1/ack", json{{"transactionId", end["transactionId"]}, {"partitionId", end["partitionId"]},
                               {"leaseId", end["leaseId"]}, {"status", "completed"}});
    t.get("/api/v1/dlq?queue=" + q);
    // Batch ack by offset and by transaction id.
    auto more = t.get("/api/v1/pop/queue/" + q + "/partition/p1?batch=5");
    json acks = json::array();
    for (const auto& x : more["messages"])
        acks.push_back(json{{"transactionId", x["transactionId"]}, {"partitionId", x["partitionId"]},
                            {"leaseId", x["leaseId"]}, {"status", "completed"}});
    acks[1]["offset"] = more["messages"][1]["offset"];
    t.post("/api/v1/ack/batch", json{{"acknowledgments", acks}});
    // A consumer group reads everything from the start, across partitions.
    for (int i = 0; i < 4; ++i) {
        auto g = t.get("/api/v1/pop/queue/" + q + "?batch=100&consumerGroup=g1");
        if (!g.contains("messages")) continue;
        auto last = g["messages"].back();
        t.post("/api/v1/ack", json{{"transactionId", last["transactionId"]}, {"partitionId", last["partitionId"]},
                                   {"leaseId", last["leaseId"]}, {"consumerGroup", "g1"}});
    }
    // A transaction: push and ack together.
    auto rest = t.get("/api/v1/pop/queue/" + q + "/partition/p1?batch=2");
    auto r0 = rest["messages"][0];
    t.post("/api/v1/transaction",
           json{{"operations", json::array({json{{"type", "push"}, {"items", json::array({item(q, "p4", "tx-1", "in a transaction")})}},
                                            json{{"type", "ack"}, {"transactionId", r0["transactionId"]},
                                                 {"partitionId", r0["partitionId"]}, {"leaseId", r0["leaseId"]}}})}});
    t.get("/api/v1/pop/queue/" + nodedup + "?batch=10");
    t.get("/api/v1/consumer-groups/g1");

    // SQL: the stored messages (all but the codec column) and the SQL API.
    t.sql("SELECT string_agg(concat_ws('|', queue, partition, \"offset\", transaction_id, trace_id, producer_sub, "
          "payload_text, payload::text), E'\\n' ORDER BY queue, partition, \"offset\") FROM queen.messages");
    t.sql("SELECT string_agg(concat_ws('|', partition, \"offset\", transaction_id, payload::text), E'\\n' "
          "ORDER BY \"offset\") FROM queen.claim('" + q + "', 'sql-reader', 50, 'p1')");
    t.sql("SELECT string_agg(concat_ws('|', status, msg_offset::text), ',' ORDER BY item) FROM queen.push("
          "ARRAY['" + q + "'], ARRAY['p1'], ARRAY[3], ARRAY['t1','t31','t31'], ARRAY[NULL,NULL,NULL]::uuid[], "
          "ARRAY[NULL,NULL,NULL]::text[], ARRAY['1','2','3'])");
    // A dead letter keeps its payload, or its segment when SQL could not decode it then.
    t.sql("SELECT string_agg(concat_ws('|', consumer_group, msg_offset, transaction_id, payload, error_message, "
          "attempts, reason), ',' ORDER BY msg_offset) FROM queen.dead_letters");
    return t.steps();
}

TEST(CodecDifferential, StockAndExtensionPathsAnswerTheSame) {
    test_cluster stock({}, "queen_test", codec_setup::stock);
    if (stock.run_sql("SELECT count(*) FROM pg_available_extensions WHERE name = 'queen_ext'") != "1") {
        if (extension_run()) FAIL() << "queen_ext is not installed (make -f Makefile.pgxs install)";
        GTEST_SKIP() << "queen_ext is not installed in PostgreSQL's directories";
    }
    test_cluster accelerated({}, "queen_test", codec_setup::extension);
    auto a = run_scenario(stock.conninfo(), stock);
    auto b = run_scenario(accelerated.conninfo(), accelerated);
    if (std::getenv("QUEEN_TEST_SHOW_TRANSCRIPT"))
        for (const auto& s : a) std::cout << s.what << "\n  -> " << s.answer << "\n";
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].what, b[i].what);
        EXPECT_EQ(a[i].answer, b[i].answer) << "step " << i << ": " << a[i].what;
    }
    // The paths really differed: zstd segments exist only with the extension.
    EXPECT_EQ(stock.run_sql("SELECT count(*) FROM queen.log_segments WHERE codec = 1"), "0");
    EXPECT_NE(accelerated.run_sql("SELECT count(*) FROM queen.log_segments WHERE codec = 1"), "0");
}

}  // namespace
}  // namespace queen::test
