// Traces through the real broker (docs/traces.md): POST /api/v1/traces (201, defaults, 400s,
// 404 for an unknown partition), GET /api/v1/traces/:partitionId/:transactionId (time
// order), GET /api/v1/traces/by-name/:name (time order, paging, total), GET
// /api/v1/traces/names, and traces removed with their queue.
#include "segment/segment_codec.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

namespace queen::test {
namespace {

using nlohmann::json;

class Traces : public ::testing::Test {
protected:
    void SetUp() override {
        queue = unique_name("traces");
        push_payloads(c, queue, "", {json("m1"), json("m2")});
        auto r = pop(c, queue, "batch=2");
        ASSERT_EQ(r.status, 200) << r.body;
        msgs = r.json()["messages"];
        ASSERT_EQ(msgs.size(), 2u);
    }

    http_reply record(const json& body) { return c.post("/api/v1/traces", body); }

    json traces_of(const json& m) {
        auto r = c.get("/api/v1/traces/" + url_encode(m["partitionId"].get<std::string>()) + "/" +
                       url_encode(m["transactionId"].get<std::string>()));
        EXPECT_EQ(r.status, 200) << r.body;
        return r.status == 200 ? r.json()["traces"] : json::array();
    }

    http_client c = client();
    std::string queue;
    json msgs;
};

TEST_F(Traces, RecordedTracesAreListedPerMessageInTimeOrder) {
    const auto& m = msgs[0];
    auto r1 = record({{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]}, {"data", {{"step", 1}}}});
    ASSERT_EQ(r1.status, 201) << r1.body;
    auto b1 = r1.json();
    EXPECT_EQ(b1["success"], true);
    ASSERT_TRUE(b1["traceId"].is_string());
    EXPECT_TRUE(segment::parse_uuid(b1["traceId"].get<std::string>())) << b1.dump();
    auto r2 = record({{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                      {"consumerGroup", "workers"}, {"eventType", "processing"}, {"data", "text data"},
                      {"traceNames", json::array({"order-1", "tenant-a"})}});
    ASSERT_EQ(r2.status, 201) << r2.body;
    auto r3 = record({{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                      {"consumerGroup", nullptr}, {"eventType", nullptr}, {"data", nullptr}, {"traceNames", nullptr}});
    ASSERT_EQ(r3.status, 201) << r3.body;

    auto traces = traces_of(m);
    ASSERT_EQ(traces.size(), 3u) << traces.dump();
    EXPECT_EQ(traces[0]["id"], b1["traceId"]);
    // snake_case, as Queen's dashboard reads them.
    EXPECT_EQ(traces[0]["transaction_id"], m["transactionId"]);
    EXPECT_EQ(traces[0]["partition_id"], m["partitionId"]);
    EXPECT_EQ(traces[0]["consumer_group"], "__QUEUE_MODE__");
    EXPECT_EQ(traces[0]["event_type"], "info");
    EXPECT_EQ(traces[0]["data"], (json{{"step", 1}}));
    EXPECT_EQ(traces[0]["trace_names"], json::array());
    EXPECT_EQ(traces[0]["worker_id"], nullptr);
    EXPECT_EQ(traces[1]["consumer_group"], "workers");
    EXPECT_EQ(traces[1]["event_type"], "processing");
    EXPECT_EQ(traces[1]["data"], "text data");
    EXPECT_EQ(traces[1]["trace_names"], json::array({"order-1", "tenant-a"}));
    EXPECT_TRUE(traces[2]["data"].is_null());
    for (std::size_t i = 0; i < traces.size(); ++i) {
        ASSERT_TRUE(traces[i]["created_at"].is_string());
        EXPECT_EQ(traces[i]["created_at"].get<std::string>().size(), 27u);
        // The camelCase aliases queenctl reads.
        EXPECT_EQ(traces[i]["createdAt"], traces[i]["created_at"]);
        EXPECT_EQ(traces[i]["eventType"], traces[i]["event_type"]);
        EXPECT_EQ(traces[i]["transactionId"], traces[i]["transaction_id"]);
        if (i) {
            EXPECT_LE(traces[i - 1]["created_at"].get<std::string>(), traces[i]["created_at"].get<std::string>());
        }
    }
    // The other message has none; an unknown message or partition neither.
    EXPECT_TRUE(traces_of(msgs[1]).empty());
    EXPECT_EQ(c.get("/api/v1/traces/" + url_encode(m["partitionId"].get<std::string>()) + "/no-such-tx").json()["traces"],
              json::array());
    EXPECT_EQ(c.get("/api/v1/traces/not-a-partition/x").json()["traces"], json::array());
}

TEST_F(Traces, BadBodiesAre400) {
    const auto& m = msgs[0];
    const json tx = m["transactionId"], pid = m["partitionId"];
    const std::vector<json> bad = {
        json{{"partitionId", pid}, {"data", 1}},                                   // no transactionId
        json{{"transactionId", tx}, {"data", 1}},                                  // no partitionId
        json{{"transactionId", nullptr}, {"partitionId", pid}, {"data", 1}},       // null = absent
        json{{"transactionId", tx}, {"partitionId", pid}},                         // no data
        json{{"transactionId", 5}, {"partitionId", pid}, {"data", 1}},
        json{{"transactionId", ""}, {"partitionId", pid}, {"data", 1}},
        json{{"transactionId", tx}, {"partitionId", 12}, {"data", 1}},
        json{{"transactionId", tx}, {"partitionId", pid}, {"data", 1}, {"eventType", 3}},
        json{{"transactionId", tx}, {"partitionId", pid}, {"data", 1}, {"consumerGroup", true}},
        json{{"transactionId", tx}, {"partitionId", pid}, {"data", 1}, {"traceNames", 7}},
        json{{"transactionId", tx}, {"partitionId", pid}, {"data", 1}, {"traceNames", json::array({"ok", 2})}},
        json{{"transactionId", tx}, {"partitionId", pid}, {"data", 1}, {"traceNames", json::array({""})}},
        json{{"transactionId", tx}, {"partitionId", pid}, {"data", {{"s", std::string("a\0b", 3)}}}},  // jsonb: no NUL
        json::array({1, 2}),
    };
    for (const auto& b : bad) {
        auto r = record(b);
        EXPECT_EQ(r.status, 400) << b.dump() << " -> " << r.body;
        if (r.status == 400) {
            EXPECT_TRUE(r.json()["error"].is_string());
        }
    }
    EXPECT_EQ(c.post("/api/v1/traces", std::string("{oops")).status, 400);
    EXPECT_EQ(c.post("/api/v1/traces", std::string()).status, 400);
    EXPECT_TRUE(traces_of(m).empty()) << "nothing was stored";
}

TEST_F(Traces, UnknownPartitionIs404) {
    auto r = record({{"transactionId", "x"}, {"partitionId", "999999999999"}, {"data", 1}});
    EXPECT_EQ(r.status, 404) << r.body;
    auto r2 = record({{"transactionId", "x"}, {"partitionId", "not-an-id"}, {"data", 1}});
    EXPECT_EQ(r2.status, 404) << r2.body;
}

TEST_F(Traces, ListingByNameInTimeOrderWithPagingAndTotal) {
    const std::string name = unique_name("wf");
    const std::string other = unique_name("wf-other");
    int step = 0;
    for (const auto& m : {msgs[0], msgs[1], msgs[0]}) {
        auto r = record({{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                         {"eventType", "step"}, {"data", {{"step", ++step}}}, {"traceNames", json::array({name})}});
        ASSERT_EQ(r.status, 201) << r.body;
    }
    // A single string is one name.
    ASSERT_EQ(record({{"transactionId", msgs[1]["transactionId"]}, {"partitionId", msgs[1]["partitionId"]},
                      {"data", 4}, {"traceNames", other}})
                  .status,
              201);

    auto r = c.get("/api/v1/traces/by-name/" + url_encode(name));
    ASSERT_EQ(r.status, 200) << r.body;
    auto body = r.json();
    EXPECT_EQ(body["trace_name"], name);
    EXPECT_EQ(body["total"], 3);
    EXPECT_EQ(body["pagination"], (json{{"limit", 100}, {"offset", 0}}));
    ASSERT_EQ(body["traces"].size(), 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(body["traces"][i]["data"]["step"], i + 1);
        EXPECT_EQ(body["traces"][i]["queue_name"], queue);
        EXPECT_EQ(body["traces"][i]["partition_name"], "Default");
        EXPECT_EQ(body["traces"][i]["partition"], "Default");
        EXPECT_EQ(body["traces"][i]["trace_names"], json::array({name}));
        EXPECT_EQ(body["traces"][i]["message_payload"], nullptr);
        EXPECT_TRUE(body["traces"][i]["id"].is_string());
    }
    EXPECT_EQ(body["traces"][1]["transaction_id"], msgs[1]["transactionId"]);

    auto page = c.get("/api/v1/traces/by-name/" + url_encode(name) + "?limit=1&offset=1").json();
    ASSERT_EQ(page["traces"].size(), 1u);
    EXPECT_EQ(page["traces"][0]["data"]["step"], 2);
    EXPECT_EQ(page["total"], 3);
    EXPECT_EQ(c.get("/api/v1/traces/by-name/" + url_encode(other)).json()["total"], 1);
    auto none = c.get("/api/v1/traces/by-name/" + url_encode(unique_name("nobody"))).json();
    EXPECT_EQ(none["total"], 0);
    EXPECT_EQ(none["traces"], json::array());
    EXPECT_EQ(c.get("/api/v1/traces/by-name/x?limit=0").status, 400);
    EXPECT_EQ(c.get("/api/v1/traces/by-name/x?limit=1001").status, 400);
    EXPECT_EQ(c.get("/api/v1/traces/by-name/x?offset=-1").status, 400);

    // Distinct names with counts.
    auto names = c.get("/api/v1/traces/names?limit=1000");
    ASSERT_EQ(names.status, 200) << names.body;
    auto nb = names.json();
    EXPECT_GE(nb["total"].get<int>(), 2);
    bool found = false;
    for (const auto& n : nb["trace_names"]) {
        if (n["trace_name"] != name) continue;
        found = true;
        EXPECT_EQ(n["trace_count"], 3);
        EXPECT_EQ(n["message_count"], 2);
        EXPECT_TRUE(n["last_seen"].is_string());
        EXPECT_EQ(n["name"], name);
        EXPECT_EQ(n["count"], 3);
        EXPECT_EQ(n["lastSeen"], n["last_seen"]);
    }
    EXPECT_TRUE(found) << nb.dump();
    EXPECT_EQ(c.get("/api/v1/traces/names?limit=0").status, 400);
}

TEST_F(Traces, DeletingTheQueueRemovesItsTraces) {
    const auto& m = msgs[0];
    ASSERT_EQ(record({{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]}, {"data", 1}}).status, 201);
    EXPECT_EQ(traces_of(m).size(), 1u);
    ASSERT_EQ(c.del("/api/v1/resources/queues/" + url_encode(queue)).status, 200);
    EXPECT_TRUE(traces_of(m).empty());
}

}  // namespace
}  // namespace queen::test
