// TolerantInput (docs/http-api.md, "What existing clients rely on"): what existing clients send
// (null for optional fields, unknown keys, from_beginning, configure of "", null payloads,
// percent-encoded names, boolean query values 1/true) is accepted and behaves as the contract
// says. What is refused instead: bad_input_*_test.cpp.
#include "bad_input_support.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace queen::test;
using namespace queen::test::bad_input_support;
using nlohmann::json;
using namespace std::chrono_literals;

}  // namespace

TEST(TolerantInput, PushAcceptsNullOptionalFieldsAndUnknownKeys) {
    const std::string q = unique_name("tolerant-push");
    auto c = client();
    json body{{"items", json::array({json{{"queue", q},
                                          {"partition", nullptr},
                                          {"transactionId", nullptr},
                                          {"traceId", nullptr},
                                          {"payload", {{"a", 1}}},
                                          {"someFutureField", {{"x", true}}}},
                                     json{{"queue", q}, {"payload", "second"}, {"producerSub", "ignored?"}}})},
              {"unknownTopLevel", 17},
              {"bufferMs", 100}};
    auto r = c.post("/api/v1/push", body);
    ASSERT_EQ(r.status, 201) << r.body;
    auto answers = r.json();
    ASSERT_EQ(answers.size(), 2u);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(answers[i]["index"], i);
        EXPECT_EQ(answers[i]["status"], "queued");
        EXPECT_EQ(answers[i]["queueName"], q);
        EXPECT_TRUE(answers[i]["trace_id"].is_null());
        ASSERT_TRUE(answers[i]["transaction_id"].is_string());
        EXPECT_FALSE(answers[i]["transaction_id"].get<std::string>().empty()) << "a transactionId is generated";
        EXPECT_EQ(answers[i]["offset"], i + 1);
    }
    EXPECT_NE(answers[0]["transaction_id"], answers[1]["transaction_id"]);

    // Stored in the Default partition with the generated ids; unknown keys left no trace.
    EXPECT_EQ(cluster().run_sql("SELECT string_agg(partition || ':' || payload::text || ':' || transaction_id, '|' "
                                "ORDER BY \"offset\") FROM queen.messages WHERE queue = " + quote(q)),
              "Default:{\"a\": 1}:" + answers[0]["transaction_id"].get<std::string>() + "|Default:\"second\":" +
                  answers[1]["transaction_id"].get<std::string>());
    auto p = pop(c, q, "batch=5");
    ASSERT_EQ(p.status, 200) << p.body;
    auto msgs = p.json()["messages"];
    ASSERT_EQ(msgs.size(), 2u);
    EXPECT_EQ(msgs[0]["data"], json({{"a", 1}}));
    EXPECT_EQ(msgs[0]["partition"], "Default");
    EXPECT_TRUE(msgs[0]["traceId"].is_null());
    EXPECT_EQ(msgs[0]["transactionId"], answers[0]["transaction_id"]);
    EXPECT_EQ(msgs[1]["data"], "second");
}

TEST(TolerantInput, NamesAndTransactionIdsOf255BytesAreAccepted) {
    const std::string base = unique_name("tolerant-255");
    const std::string q = base + std::string(255 - base.size(), 'q');
    const std::string part(255, 'p');
    const std::string tx(255, 't');
    auto c = client();
    auto r = c.post("/api/v1/push", json{{"items", json::array({json{{"queue", q}, {"partition", part},
                                                                     {"transactionId", tx}, {"payload", "edge"}}})}});
    ASSERT_EQ(r.status, 201) << r.body;
    EXPECT_EQ(r.json()[0]["status"], "queued");
    EXPECT_EQ(r.json()[0]["transaction_id"], tx);
    auto p = pop(c, q, "consumerGroup=" + std::string(255, 'g'), part);
    ASSERT_EQ(p.status, 200) << p.body;
    EXPECT_EQ(p.json()["messages"][0]["transactionId"], tx);
    EXPECT_EQ(p.json()["messages"][0]["data"], "edge");
    EXPECT_EQ(c.post("/api/v1/configure", json{{"queue", q}}).status, 200);
    // A pop of an unknown partition is an empty answer, never a 404.
    EXPECT_EQ(pop(c, q, "", "no-such-partition").status, 204);
}

TEST(TolerantInput, NullPayloadIsAcceptedAndReturnedAsNull) {
    const std::string q = unique_name("tolerant-null-payload");
    auto c = client();
    json body{{"items", json::array({json{{"queue", q}, {"payload", nullptr}, {"transactionId", "with-null"}},
                                     json{{"queue", q}, {"transactionId", "without-payload"}},
                                     json{{"queue", q}, {"payload", 0}, {"transactionId", "zero"}}})}};
    auto r = c.post("/api/v1/push", body);
    ASSERT_EQ(r.status, 201) << r.body;
    for (const auto& a : r.json()) EXPECT_EQ(a["status"], "queued") << a.dump();
    EXPECT_EQ(cluster().run_sql("SELECT string_agg(transaction_id || '=' || payload::text, ',' ORDER BY \"offset\") "
                                "FROM queen.messages WHERE queue = " + quote(q)),
              "with-null=null,without-payload=null,zero=0");
    auto p = pop(c, q, "batch=3");
    ASSERT_EQ(p.status, 200) << p.body;
    auto msgs = p.json()["messages"];
    ASSERT_EQ(msgs.size(), 3u);
    ASSERT_TRUE(msgs[0].contains("data"));
    EXPECT_TRUE(msgs[0]["data"].is_null()) << msgs[0].dump();
    ASSERT_TRUE(msgs[1].contains("data"));
    EXPECT_TRUE(msgs[1]["data"].is_null()) << msgs[1].dump();
    EXPECT_EQ(msgs[2]["data"], 0);
}

TEST(TolerantInput, AnyJsonPayloadRoundTripsExactly) {
    const std::string q = unique_name("tolerant-any-json");
    auto c = client();
    const std::vector<json> payloads{
        json("plain"),
        json("quotes \" and backslashes \\ and {braces}, [brackets] and NULL"),
        json("unicode: \u00fc\u00f1 \u4e2d \U0001F600"),
        json::array({1, 2.5, -3, true, false, nullptr, "x"}),
        json{{"nested", {{"deep", json::array({json::object(), json::array()})}}}, {"big", 9007199254740993LL}},
        json(""),
        json(0),
        json(false),
    };
    push_payloads(c, q, "", payloads);
    auto p = pop(c, q, "batch=20");
    ASSERT_EQ(p.status, 200) << p.body;
    const json body = p.json();
    ASSERT_EQ(body["messages"].size(), payloads.size());
    for (std::size_t i = 0; i < payloads.size(); ++i) EXPECT_EQ(body["messages"][i]["data"], payloads[i]) << i;
    EXPECT_EQ(cluster().run_sql("SELECT count(*) FROM queen.messages WHERE queue = " + quote(q)),
              std::to_string(payloads.size()));
    EXPECT_EQ(cluster().run_sql("SELECT payload->>'big' FROM queen.messages WHERE queue = " + quote(q) +
                                " AND \"offset\" = 5"),
              "9007199254740993");
}

TEST(TolerantInput, PayloadWithAnEscapedNulCharacterRoundTrips) {
    // "\u0000" is valid JSON inside a string; the broker stores payloads as JSON text.
    const std::string q = unique_name("tolerant-nul");
    auto c = client();
    auto r = c.post("/api/v1/push", std::string(R"({"items":[{"queue":")") + q +
                                        R"(","payload":{"s":"a\u0000b"}}]})");
    ASSERT_EQ(r.status, 201) << r.body;
    auto p = pop(c, q);
    ASSERT_EQ(p.status, 200) << p.body;
    EXPECT_EQ(p.json()["messages"][0]["data"]["s"], std::string("a\0b", 3));
    // What the database holds, through the documented view of every stored message. Its
    // payload column is jsonb, which cannot hold \u0000: reading it must not fail.
    std::string stored;
    try {
        stored = cluster().run_sql("SELECT payload->>'s' IS NOT NULL FROM queen.messages WHERE queue = " + quote(q));
    } catch (const std::exception& e) {
        ADD_FAILURE() << "BUG: queen.messages cannot be read for a stored message whose payload contains "
                         "\\u0000 (view casts the payload to jsonb): "
                      << e.what();
    }
    EXPECT_EQ(stored, "t");
    // The exact JSON text is kept as stored.
    EXPECT_EQ(cluster().run_sql("SELECT payload_text FROM queen.messages WHERE queue = " + quote(q)),
              R"({"s":"a\u0000b"})");
}

TEST(TolerantInput, ConfigureAcceptsNullsUnknownKeysAndTheEmptyQueueName) {
    auto c = client();
    const std::string q = unique_name("tolerant-configure");
    // What the JavaScript client sends: namespace/task null, every option, plus keys this broker does not know.
    json options{{"leaseTime", 42},          {"retryLimit", 5},          {"retryDelay", 0},
                 {"priority", 0},            {"delayedProcessing", 0},   {"windowBuffer", 0},
                 {"maxSize", 0},             {"ttl", 3600},              {"retentionEnabled", false},
                 {"retentionSeconds", 0},    {"completedRetentionSeconds", 0},
                 {"maxWaitTimeSeconds", 0},  {"deadLetterQueue", false}, {"dlqAfterMaxRetries", false},
                 {"encryptionEnabled", false}, {"someFutureOption", "x"}, {"maxQueueSize", nullptr}};
    auto r = c.post("/api/v1/configure",
                    json{{"queue", q}, {"namespace", nullptr}, {"task", nullptr}, {"options", options}, {"extra", 1}});
    ASSERT_EQ(r.status, 200) << r.body;
    auto out = r.json();
    EXPECT_EQ(out["configured"], true);
    EXPECT_EQ(out["queue"], q);
    EXPECT_TRUE(out["namespace"].is_null());
    EXPECT_TRUE(out["task"].is_null());
    EXPECT_EQ(out["options"]["leaseTime"], 42);
    EXPECT_EQ(out["options"]["retryLimit"], 5);
    EXPECT_EQ(cluster().run_sql("SELECT format('%s/%s/%s/%s', lease_time, retry_limit, namespace, task) "
                                "FROM queen.queues WHERE name = " + quote(q)),
              "42/5//");

    // options: null means absent: every option returns to its default.
    r = c.post("/api/v1/configure", json{{"queue", q}, {"namespace", nullptr}, {"task", nullptr}, {"options", nullptr}});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["options"]["leaseTime"], 300);
    EXPECT_EQ(r.json()["options"]["retryLimit"], 3);
    EXPECT_EQ(cluster().run_sql("SELECT lease_time FROM queen.queues WHERE name = " + quote(q)), "300");
    // Option values that are null are absent too.
    r = c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"leaseTime", nullptr}, {"retryLimit", 7}}}});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["options"]["leaseTime"], 300);
    EXPECT_EQ(r.json()["options"]["retryLimit"], 7);

    // The empty queue name is accepted by configure.
    r = c.post("/api/v1/configure", json{{"queue", ""}, {"namespace", nullptr}, {"task", nullptr}, {"options", json::object()}});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["configured"], true);
    EXPECT_EQ(r.json()["queue"], "");
}

TEST(TolerantInput, AckAcceptsNullOptionalFields) {
    const std::string q = unique_name("tolerant-ack");
    auto c = client();
    push_payloads(c, q, "", {1, 2, 3});
    auto p = pop(c, q, "batch=1");
    ASSERT_EQ(p.status, 200) << p.body;
    json m = p.json()["messages"][0];
    auto r = c.post("/api/v1/ack", json{{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                                        {"status", "completed"}, {"consumerGroup", nullptr}, {"error", nullptr},
                                        {"leaseId", nullptr}, {"offset", nullptr}, {"unknownKey", 1}});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["success"], true) << r.body;
    EXPECT_TRUE(r.json()["error"].is_null()) << r.body;
    const std::string cursor = "SELECT committed FROM queen.log_consumers WHERE consumer_group = '__QUEUE_MODE__' "
                               "AND partition_id = " + m["partitionId"].get<std::string>();
    EXPECT_EQ(cluster().run_sql(cursor), "1");

    // Batch: consumerGroup null at the top, leaseId/error null per entry, status omitted.
    p = pop(c, q, "batch=2");
    ASSERT_EQ(p.status, 200) << p.body;
    json acks = json::array();
    const json second = p.json();
    for (const auto& msg : second["messages"])
        acks.push_back(json{{"transactionId", msg["transactionId"]}, {"partitionId", msg["partitionId"]},
                            {"status", nullptr}, {"error", nullptr}, {"leaseId", nullptr}});
    r = c.post("/api/v1/ack/batch", json{{"consumerGroup", nullptr}, {"acknowledgments", acks}});
    ASSERT_EQ(r.status, 200) << r.body;
    auto answers = r.json();
    ASSERT_EQ(answers.size(), 2u) << r.body;
    for (const auto& a : answers) {
        EXPECT_EQ(a["success"], true) << a.dump();
        EXPECT_TRUE(a["error"].is_null()) << a.dump();
    }
    EXPECT_EQ(cluster().run_sql(cursor), "3");
    EXPECT_EQ(pop(c, q).status, 204);
}

TEST(TolerantInput, SubscriptionModeFromBeginningMeansAll) {
    const std::string q = unique_name("tolerant-from-beginning");
    auto c = client();
    push_payloads(c, q, "", {"old-1", "old-2"});
    auto p = pop(c, q, "batch=10&consumerGroup=fb&subscriptionMode=from_beginning");
    ASSERT_EQ(p.status, 200) << p.body;
    auto msgs = p.json()["messages"];
    ASSERT_EQ(msgs.size(), 2u);
    EXPECT_EQ(msgs[0]["data"], "old-1");
    EXPECT_EQ(msgs[1]["data"], "old-2");
    EXPECT_EQ(msgs[0]["consumerGroup"], "fb");
    // Also an unknown mode, and consumerGroup=null in the query meaning queue mode.
    p = pop(c, q, "batch=10&consumerGroup=other&subscriptionMode=whatever");
    ASSERT_EQ(p.status, 200) << p.body;
    EXPECT_EQ(p.json()["messages"].size(), 2u);
    p = pop(c, q, "batch=10&consumerGroup=null&subscriptionMode=null&subscriptionFrom=null");
    ASSERT_EQ(p.status, 200) << p.body;
    EXPECT_EQ(p.json()["consumerGroup"], "__QUEUE_MODE__");
    EXPECT_EQ(p.json()["messages"].size(), 2u);
}

TEST(TolerantInput, PercentEncodedNamesInPopPaths) {
    const std::string q = "a b/c " + unique_name("enc");
    const std::string part = "p q/r%";
    auto c = client();
    push_payloads(c, q, "", {"in-default"});
    push_payloads(c, q, part, {"in-odd-partition"});
    EXPECT_EQ(sql_count("SELECT count(*) FROM queen.queues WHERE name = " + quote(q)), 1);

    auto r = c.get("/api/v1/pop/queue/" + url_encode(q) + "/partition/" + url_encode(part));
    ASSERT_EQ(r.status, 200) << r.body;
    auto out = r.json();
    EXPECT_EQ(out["queue"], q);
    EXPECT_EQ(out["partition"], part);
    ASSERT_EQ(out["messages"].size(), 1u);
    EXPECT_EQ(out["messages"][0]["data"], "in-odd-partition");
    EXPECT_EQ(out["messages"][0]["partition"], part);

    // Lower-case escapes and the queue-wide route.
    std::string lower;
    for (char ch : url_encode(q)) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    r = c.get("/api/v1/pop/queue/" + lower + "?batch=5");
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_EQ(r.json()["messages"].size(), 1u);
    EXPECT_EQ(r.json()["messages"][0]["data"], "in-default");
    EXPECT_EQ(r.json()["queue"], q);
}

TEST(TolerantInput, BooleanQueryValuesTrueAndOne) {
    auto c = client();
    // autoAck=true and autoAck=1 commit inside the pop (leaseId ""); anything else is false.
    for (const std::string v : {"true", "1"}) {
        const std::string q = unique_name("bool-autoack");
        push_payloads(c, q, "", {"m1", "m2"});
        auto p = pop(c, q, "autoAck=" + v);
        ASSERT_EQ(p.status, 200) << p.body;
        EXPECT_EQ(p.json()["leaseId"], "") << v;
        EXPECT_EQ(p.json()["messages"][0]["leaseId"], "") << v;
        EXPECT_EQ(cluster().run_sql("SELECT format('%s/%s', c.committed, c.lease_id IS NULL) FROM queen.log_consumers c "
                                    "JOIN queen.queues q ON q.id = c.queue_id WHERE q.name = " + quote(q)),
                  "1/t")
            << v;
    }
    for (const std::string v : {"yes", "TRUE", "0", "false", ""}) {
        const std::string q = unique_name("bool-autoack-false");
        push_payloads(c, q, "", {"m1"});
        auto p = pop(c, q, "autoAck=" + v);
        ASSERT_EQ(p.status, 200) << p.body;
        EXPECT_NE(p.json()["leaseId"], "") << "autoAck=" << v << " must be false";
        EXPECT_EQ(cluster().run_sql("SELECT c.committed FROM queen.log_consumers c JOIN queen.queues q "
                                    "ON q.id = c.queue_id WHERE q.name = " + quote(q)),
                  "0")
            << v;
    }
    // wait=true and wait=1 park the pop until a push arrives (instead of answering 204 at once).
    for (const std::string v : {"true", "1"}) {
        const std::string q = unique_name("bool-wait");
        auto parked = std::async(std::launch::async, [q, v] {
            auto pc = client();
            return pop(pc, q, "wait=" + v + "&timeout=30000");
        });
        std::this_thread::sleep_for(300ms);
        push_payloads(c, q, "", {"woke"});
        ASSERT_EQ(parked.wait_for(25s), std::future_status::ready) << "wait=" << v;
        auto p = parked.get();
        ASSERT_EQ(p.status, 200) << "wait=" << v << " " << p.body;
        EXPECT_EQ(p.json()["messages"][0]["data"], "woke");
    }
    // wait=yes is false: an empty queue answers 204 at once, not after the 30 s timeout.
    {
        const std::string q = unique_name("bool-wait-false");
        auto start = std::chrono::steady_clock::now();
        auto p = pop(c, q, "wait=yes&timeout=30000");
        EXPECT_EQ(p.status, 204);
        EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);
    }
}
