// Hostile JSON through the real broker (docs/json-input.md).
//
// HostileJson.EveryBodyRouteSurvivesTheBadInputTable drives every route that takes a body
// with nesting 10^2..10^6 deep, long keys, 10 MB strings, a million values, integers past
// int64, invalid UTF-8 and NUL bytes in every string field and duplicate keys; each answer is a 2xx or a 4xx naming the problem,
// the broker stays up, and a 4xx leaves every queen table as it was (row versions compared).
// The other tests follow one payload at the depth limit through push, pop, queen.messages and
// the dead letters; refuse one level deeper on every way in; and pop and dead-letter a row
// stored deeper than the limit before it existed.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace queen::test {
namespace {

using nlohmann::json;

constexpr int depth_limit = 1000;  // queen.max_payload_depth(); checked against the database below

std::string nested_arrays(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// {"a":[{"a":[ … 1 … ]}]}: objects and arrays alternating, `depth` levels in all.
std::string nested_mixed(std::size_t depth) {
    std::string open, close;
    for (std::size_t i = 0; i < depth; ++i) {
        open += i % 2 ? "[" : "{\"a\":";
        close.insert(0, i % 2 ? "]" : "}");
    }
    return open + "1" + close;
}

// Every row version of every queen table: any insert, update or delete changes it.
constexpr const char* footprint_function = R"SQL(
CREATE OR REPLACE FUNCTION public.queen_footprint() RETURNS text LANGUAGE plpgsql AS $$
DECLARE r record; h text; acc text := '';
BEGIN
  FOR r IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'queen' AND c.relkind IN ('r', 'p') ORDER BY 1 LOOP
    EXECUTE format('SELECT md5(coalesce(string_agg(ctid::text || '':'' || xmin::text, '','' ORDER BY ctid), '''')) FROM queen.%I', r.relname) INTO h;
    acc := acc || r.relname || '=' || left(h, 8) || ' ';
  END LOOP;
  RETURN acc;
END $$)SQL";

struct route {
    std::string method;
    std::string target;
    json body;  // holds the string "@SLOT@" where hostile values go
};

// Each string leaf of v, as a JSON pointer.
void string_leaves(const json& v, const std::string& at, std::vector<std::string>& out) {
    if (v.is_string()) {
        if (v.get<std::string>() != "@SLOT@") out.push_back(at);
    } else if (v.is_structured()) {
        for (auto it = v.begin(); it != v.end(); ++it)
            string_leaves(it.value(), at + "/" + (v.is_array() ? std::to_string(it - v.begin()) : it.key()), out);
    }
}

// The body text with the JSON string at `pointer` (or the slot) replaced by raw text.
std::string with_raw(const json& body, const std::string& pointer, const std::string& raw) {
    json marked = body;
    const std::string marker = "@MARK-7f3a@";
    if (pointer.empty()) {
        marked = json::parse(body.dump());
    } else {
        marked[json::json_pointer(pointer)] = marker;
    }
    std::string text = marked.dump();
    const std::string quoted = "\"" + (pointer.empty() ? std::string("@SLOT@") : marker) + "\"";
    auto at = text.find(quoted);
    if (at == std::string::npos) return text;
    return text.replace(at, quoted.size(), raw);
}

struct hostile_value {
    std::string name;
    std::string raw;
};

std::vector<hostile_value> slot_values() {
    std::vector<hostile_value> v;
    for (std::size_t d : {100u, 1000u, 10000u, 100000u, 1000000u}) v.push_back({"depth " + std::to_string(d), nested_arrays(d)});
    v.push_back({"depth 10^6 objects", [] {
                     std::string s;
                     for (int i = 0; i < 1000000; ++i) s += "{\"k\":";
                     return s + "1" + std::string(1000000, '}');
                 }()});
    v.push_back({"unclosed depth 10^6", std::string(1000000, '[')});
    v.push_back({"long key", "{\"" + std::string(200000, 'k') + "\":1}"});
    v.push_back({"10 MB string", "\"" + std::string(10 * 1024 * 1024, 's') + "\""});
    v.push_back({"duplicate keys", R"({"a":1,"a":{"b":2},"a":[3]})"});
    v.push_back({"NUL escape", R"("a\u0000b")"});
    v.push_back({"lone surrogate", R"("a\ud800b")"});
    v.push_back({"huge number", "1e999999"});
    // Past QUEEN_MAX_JSON_VALUES (1,000,000): 413 before any document is built.
    v.push_back({"1,000,001 empty arrays", [] {
                     std::string s = "[[]";
                     for (int i = 0; i < 1000000; ++i) s += ",[]";
                     return s + "]";
                 }()});
    v.push_back({"2^64 - 10^6", "18446744073708551616"});
    return v;
}

std::vector<hostile_value> string_values() {
    return {
        {"invalid UTF-8", "\"ab\xff\xfe" "cd\""},
        {"overlong UTF-8", "\"ab\xc0\xaf" "cd\""},
        {"NUL escape", R"("ab\u0000cd")"},
        {"raw NUL byte", std::string("\"ab\0cd\"", 7)},
        {"10 MB string", "\"" + std::string(10 * 1024 * 1024, 'z') + "\""},
        {"lone surrogate", R"("\udc00")"},
        {"deep array instead", nested_arrays(100000)},
    };
}

class HostileJson : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        db_ = new test_cluster();
        db_->run_sql(footprint_function);
        // No housekeeping, no raise of the claim floors, no stats snapshot and no activity flush
        // during the run: the footprint must move only with the requests.
        broker_ = new broker_process(db_->conninfo(), {{"QUEEN_HOUSEKEEPING_INTERVAL_MS", "3600000"},
                                                       {"QUEEN_CLAIM_FLOOR_INTERVAL_MS", "3600000"},
                                                       {"QUEEN_STATS_INTERVAL_MS", "3600000"},
                                                       {"QUEEN_METRICS_FLUSH_MS", "3600000"}});
    }
    static void TearDownTestSuite() {
        delete broker_;
        delete db_;
        broker_ = nullptr;
        db_ = nullptr;
    }
    static test_cluster* db_;
    static broker_process* broker_;
};
test_cluster* HostileJson::db_ = nullptr;
broker_process* HostileJson::broker_ = nullptr;

TEST_F(HostileJson, TheLimitIsTheDatabases) {
    EXPECT_EQ(db_->run_sql("SELECT queen.max_payload_depth()"), std::to_string(depth_limit));
    EXPECT_NE(broker_->log().find("payloads may nest 1000 levels"), std::string::npos);
}

TEST_F(HostileJson, EveryBodyRouteSurvivesTheBadInputTable) {
    http_client c("127.0.0.1", broker_->port());
    const std::string q = "hostile", group = "g1";
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retryLimit", 0}}}}).status, 200);
    ASSERT_EQ(push_payloads(c, q, "", {json{{"n", 1}}, json{{"n", 2}}, json{{"n", 3}}}).size(), 3u);
    auto popped = pop(c, q, "batch=1&consumerGroup=" + group);
    ASSERT_EQ(popped.status, 200) << popped.body;
    const json m = popped.json()["messages"][0];
    const std::string tx = m["transactionId"], pid = m["partitionId"], lease = m["leaseId"];

    json ack_body{{"transactionId", tx}, {"partitionId", pid}, {"status", "failed"}, {"consumerGroup", group},
                  {"error", "boom"},     {"leaseId", lease}, {"x", "@SLOT@"}};
    const std::vector<route> routes{
        {"POST", "/api/v1/push",
         {{"items", {{{"queue", q}, {"partition", "p1"}, {"transactionId", "t-new"}, {"payload", "@SLOT@"}}}}}},
        {"POST", "/api/v1/transaction",
         {{"operations",
           {{{"type", "push"}, {"items", {{{"queue", q}, {"partition", "p2"}, {"payload", "@SLOT@"}}}}},
            {{"type", "ack"}, {"transactionId", tx}, {"partitionId", pid}, {"status", "completed"},
             {"consumerGroup", group}, {"leaseId", lease}}}},
          {"requiredLeases", {lease}}}},
        {"POST", "/api/v1/configure",
         {{"queue", "other"}, {"namespace", "ns"}, {"task", "tk"}, {"options", {{"leaseTime", 60}, {"x", "@SLOT@"}}}}},
        {"POST", "/api/v1/ack", ack_body},
        {"POST", "/api/v1/ack/batch", {{"consumerGroup", group}, {"acknowledgments", {ack_body}}}},
        {"POST", "/api/v1/traces",
         {{"transactionId", tx}, {"partitionId", pid}, {"consumerGroup", group}, {"eventType", "step"},
          {"data", "@SLOT@"}, {"traceNames", {"n1"}}}},
        {"POST", "/api/v1/dlq/requeue", {{"queue", q}, {"consumerGroup", group}, {"x", "@SLOT@"}}},
        {"POST", "/api/v1/lease/" + lease + "/extend", {{"seconds", 30}, {"x", "@SLOT@"}}},
        {"POST", "/api/v1/consumer-groups/" + group + "/queues/" + q + "/seek",
         {{"timestamp", "2026-01-01T00:00:00Z"}, {"x", "@SLOT@"}}},
        {"POST", "/api/v1/consumer-groups/g2/queues/" + q + "/partitions/Default/seek", {{"x", "@SLOT@"}}},
        {"POST", "/api/v1/consumer-groups/g3/subscription",
         {{"subscriptionTimestamp", "2026-01-01T00:00:00Z"}, {"x", "@SLOT@"}}},
        {"POST", "/api/v1/system/maintenance", {{"enabled", false}, {"x", "@SLOT@"}}},
        {"POST", "/api/v1/system/maintenance/pop", {{"enabled", false}, {"x", "@SLOT@"}}},
    };

    int cases = 0, refused = 0;
    auto run_case = [&](const route& r, const std::string& what, const std::string& body) {
        if (HasFatalFailure()) return;
        SCOPED_TRACE(r.method + " " + r.target + " with " + what);
        ++cases;
        const std::string before = db_->run_sql("SELECT public.queen_footprint()");
        http_reply reply;
        try {
            reply = c.request(r.method, r.target, body);
        } catch (const std::exception& e) {
            FAIL() << "no answer (" << e.what() << "): the broker did not survive";
        }
        EXPECT_TRUE((reply.status >= 200 && reply.status < 300) || (reply.status >= 400 && reply.status < 500))
            << reply.status << " " << reply.body.substr(0, 300);
        if (reply.status >= 400) {
            ++refused;
            json answer;
            ASSERT_NO_THROW(answer = reply.json()) << reply.body.substr(0, 300);
            ASSERT_TRUE(answer.contains("error") && answer["error"].is_string()) << reply.body.substr(0, 300);
            EXPECT_GT(answer["error"].get<std::string>().size(), 10u);
            EXPECT_EQ(db_->run_sql("SELECT public.queen_footprint()"), before) << "a refused request wrote something";
        }
        http_client fresh("127.0.0.1", broker_->port());
        ASSERT_EQ(fresh.get("/health").status, 200) << "the broker did not survive";
    };
    for (const auto& r : routes) {
        for (const auto& v : slot_values()) run_case(r, "slot: " + v.name, with_raw(r.body, "", v.raw));
        std::vector<std::string> leaves;
        string_leaves(r.body, "", leaves);
        for (const auto& leaf : leaves)
            for (const auto& v : string_values()) run_case(r, leaf + ": " + v.name, with_raw(r.body, leaf, v.raw));
        // Duplicate keys of the body itself: the last one counts, as in jsonb.
        const std::string text = with_raw(r.body, "", "1");
        const auto first = r.body.begin();
        run_case(r, "duplicate first key", "{" + json(first.key()).dump() + ":" + first.value().dump() + "," + text.substr(1));
    }
    std::printf("bad-input table: %d requests, %d refused\n", cases, refused);
    EXPECT_GT(cases, 400);
    EXPECT_GT(refused, 200);
    // Deep bodies were refused before any parser: the broker logged no internal error.
    EXPECT_EQ(broker_->log().find("internal error"), std::string::npos);
}

TEST(HostileJsonShared, APayloadAtTheLimitRoundTripsThroughPushPopMessagesAndDeadLetters) {
    auto c = client();
    const std::string q = unique_name("depth-limit");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retryLimit", 0}}}}).status, 200);
    const std::string payload = nested_mixed(depth_limit);
    const json expected = json::parse(payload);
    auto pushed = c.post("/api/v1/push", R"({"items":[{"queue":")" + q + R"(","payload":)" + payload + "}]}");
    ASSERT_EQ(pushed.status, 201) << pushed.body.substr(0, 300);

    auto popped = pop(c, q, "batch=5");
    ASSERT_EQ(popped.status, 200);
    const json msg = popped.json()["messages"][0];
    EXPECT_EQ(msg["data"], expected);
    EXPECT_EQ(cluster().run_sql("SELECT (payload = " + quote(payload) + "::jsonb)::text FROM queen.messages WHERE queue = " +
                                quote(q)),
              "true");
    // The SQL API takes the same payload and refuses one level more.
    EXPECT_EQ(cluster().run_sql("SELECT status FROM queen.send(" + quote(q) + ", " + quote(payload) + "::jsonb)"),
              "queued");
    try {
        cluster().run_sql("SELECT status FROM queen.send(" + quote(q) + ", " + quote("[" + payload + "]") + "::jsonb)");
        ADD_FAILURE() << "queen.send stored a payload deeper than the limit";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("nests deeper than 1000 levels"), std::string::npos) << e.what();
    }
    try {
        cluster().run_sql("SELECT count(*) FROM queen.send_batch(" + quote(q) + ", ARRAY['1'::jsonb, " +
                          quote("[" + payload + "]") + "::jsonb])");
        ADD_FAILURE() << "queen.send_batch stored a payload deeper than the limit";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("payload 2 nests deeper"), std::string::npos) << e.what();
    }

    auto acked = ack(c, msg, "dlq");
    EXPECT_EQ(acked["dlq"], true) << acked.dump();
    auto letters = c.get("/api/v1/dlq?queue=" + url_encode(q));
    ASSERT_EQ(letters.status, 200);
    ASSERT_EQ(letters.json()["messages"].size(), 1u);
    EXPECT_EQ(letters.json()["messages"][0]["data"], expected);
    EXPECT_EQ(cluster().run_sql("SELECT count(*) FROM queen.messages WHERE queue = " + quote(q)), "2");
}

TEST(HostileJsonShared, OneLevelDeeperIsRefusedOnEveryWayInAndNothingIsWritten) {
    auto c = client();
    const std::string q = unique_name("depth-over");
    const std::string deeper = nested_mixed(depth_limit + 1);
    const std::string count_sql = "SELECT count(*) FROM queen.queues WHERE name = " + quote(q);
    auto r = c.post("/api/v1/push", R"({"items":[{"queue":")" + q + R"(","payload":1},{"queue":")" + q +
                                        R"(","payload":)" + deeper + "}]}");
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.json()["error"], "items[1].payload nests deeper than 1000 levels, the limit for payloads");
    r = c.post("/api/v1/transaction",
               R"({"operations":[{"type":"push","items":[{"queue":")" + q + R"(","payload":)" + deeper + "}]}]}");
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(r.json()["error"].get<std::string>().find("operations[0].items[0].payload nests deeper than 1000"),
              std::string::npos)
        << r.body;
    EXPECT_EQ(cluster().run_sql(count_sql), "0");
    r = c.post("/api/v1/traces", R"({"transactionId":"t","partitionId":"1","data":)" + deeper + "}");
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.json()["error"], "data nests deeper than 1000 levels, the limit for payloads");
}

TEST(HostileJsonShared, RowsStoredDeeperThanTheLimitStillPopAndDeadLetter) {
    auto c = client();
    const std::string q = unique_name("old-deep");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retryLimit", 0}}}}).status, 200);
    // As an earlier version stored them: queen.push (the broker's procedure) takes JSON text
    // unchecked. 100,000 levels is beyond what jsonb reads; 5,000 is beyond the limit only.
    const std::string too_deep = nested_arrays(100000), deep = nested_arrays(5000);
    cluster().run_sql("SELECT count(*) FROM queen.push(ARRAY[" + quote(q) +
                      "], ARRAY['Default'], ARRAY[3], ARRAY['old-1', 'old-2', 'old-3'], ARRAY[NULL, NULL, NULL]::uuid[], "
                      "ARRAY[NULL, NULL, NULL]::text[], ARRAY[" + quote(too_deep) + ", " + quote(deep) + ", '{\"ok\":1}'])");
    EXPECT_EQ(cluster().run_sql("SELECT string_agg(coalesce(jsonb_typeof(payload), 'NULL'), ',' ORDER BY \"offset\") "
                                "FROM queen.messages WHERE queue = " + quote(q)),
              "NULL,array,object");

    auto popped = pop(c, q, "batch=3");
    ASSERT_EQ(popped.status, 200);
    EXPECT_NE(popped.body.find("\"data\":" + too_deep + ","), std::string::npos);
    EXPECT_NE(popped.body.find("\"data\":" + deep + ","), std::string::npos);
    const std::string lease = popped.body.substr(popped.body.find("\"leaseId\":\"") + 11, 36);
    const std::string pid = cluster().run_sql(
        "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = " + quote(q));
    auto acked = c.post("/api/v1/ack/batch",
                        json{{"acknowledgments",
                              {{{"transactionId", "old-1"}, {"partitionId", pid}, {"leaseId", lease}, {"status", "failed"}},
                               {{"transactionId", "old-2"}, {"partitionId", pid}, {"leaseId", lease}, {"status", "dlq"}},
                               {{"transactionId", "old-3"}, {"partitionId", pid}, {"leaseId", lease}}}}});
    ASSERT_EQ(acked.status, 200) << acked.body;
    EXPECT_EQ(acked.json()[0]["dlq"], true) << acked.body;
    EXPECT_EQ(acked.json()[1]["dlq"], true) << acked.body;
    auto letters = c.get("/api/v1/dlq?queue=" + url_encode(q));
    ASSERT_EQ(letters.status, 200);
    EXPECT_NE(letters.body.find("\"data\":" + too_deep), std::string::npos);
    EXPECT_EQ(cluster().run_sql("SELECT count(*) FROM queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id "
                                "WHERE q.name = " + quote(q) + " AND d.payload = " + quote(too_deep)),
              "1");
    // Requeued, it is a new message that pops again, as stored.
    auto requeued = c.post("/api/v1/dlq/requeue", json{{"queue", q}});
    ASSERT_EQ(requeued.status, 200) << requeued.body;
    auto again = pop(c, q, "batch=5");
    ASSERT_EQ(again.status, 200);
    EXPECT_NE(again.body.find("\"data\":" + too_deep + ","), std::string::npos);
    EXPECT_NE(again.body.find("\"data\":" + deep + ","), std::string::npos);
    EXPECT_EQ(c.get("/health").status, 200);
}

TEST(HostileJsonShared, NulSurrogatesAndNumbersArePushedPoppedAndReadAsDocumented) {
    auto c = client();
    const std::string q = unique_name("escapes");
    auto push_raw = [&](const std::string& payload) {
        return c.post("/api/v1/push", R"({"items":[{"queue":")" + q + R"(","payload":)" + payload + "}]}");
    };
    // \u0000: kept as pushed for HTTP consumers; SQL readers see U+FFFD (jsonb cannot hold it).
    ASSERT_EQ(push_raw(R"({"s":"a\u0000b"})").status, 201);
    // A surrogate pair is a character; an unpaired surrogate is refused.
    ASSERT_EQ(push_raw(R"("\ud83d\ude00")").status, 201);
    auto lone = push_raw(R"("\ud800")");
    EXPECT_EQ(lone.status, 400);
    EXPECT_NE(lone.json()["error"].get<std::string>().find("unpaired UTF-16 surrogate \\uD800"), std::string::npos);
    // Numbers are read as doubles (as JavaScript clients do): 1e308 is stored, 1e400 refused.
    ASSERT_EQ(push_raw("1e308").status, 201);
    auto huge = push_raw("1e400");
    EXPECT_EQ(huge.status, 400);
    EXPECT_NE(huge.json()["error"].get<std::string>().find("a number is out of range"), std::string::npos);
    // A NUL byte ends the input for nlohmann's parser: what follows must not be ignored.
    const std::string nul_body = R"({"items":[{"queue":")" + q + R"(","payload":0}]})";
    auto nul = c.post("/api/v1/push", nul_body + std::string(1, '\0') + "junk");
    EXPECT_EQ(nul.status, 400);
    EXPECT_NE(nul.json()["error"].get<std::string>().find("control character 0x00"), std::string::npos) << nul.body;
    auto invalid = c.post("/api/v1/push", "{\"items\":[{\"queue\":\"" + q + "\",\"payload\":\"\xe2\x82\"}]}");
    EXPECT_EQ(invalid.status, 400);
    EXPECT_NE(invalid.json()["error"].get<std::string>().find("invalid UTF-8 at byte"), std::string::npos);

    auto popped = pop(c, q, "batch=10");
    ASSERT_EQ(popped.status, 200);
    EXPECT_NE(popped.body.find(R"("data":{"s":"a\u0000b"})"), std::string::npos) << popped.body;
    const json messages = popped.json()["messages"];
    ASSERT_EQ(messages.size(), 3u);
    EXPECT_EQ(messages[0]["data"]["s"], std::string("a\0b", 3));
    EXPECT_EQ(messages[1]["data"], "\xf0\x9f\x98\x80");
    EXPECT_EQ(messages[2]["data"], 1e308);
    EXPECT_EQ(cluster().run_sql("SELECT string_agg(payload::text, ' ' ORDER BY \"offset\") FROM queen.messages "
                                "WHERE queue = " + quote(q)),
              "{\"s\": \"a\xef\xbf\xbd" "b\"} \"\xf0\x9f\x98\x80\" " + std::string("1") + std::string(308, '0'));
}

}  // namespace
}  // namespace queen::test
