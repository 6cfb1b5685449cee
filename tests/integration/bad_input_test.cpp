// Input validation at the HTTP boundary (docs/http-api.md, "Conventions" and "What existing clients rely on").
//
// BadInput: every really wrong input is answered with the right 4xx and a JSON body
// {"error": "<message naming the problem>"} (valid UTF-8, without CORS headers for a client
// that sends no Origin), and NOTHING is written for a rejected request (asserted on the
// database for a unique queue name, case by case).
// TolerantInput: what existing clients send (null for optional fields, unknown keys,
// from_beginning, configure of "", null payloads, percent-encoded names, boolean query
// values 1/true) is accepted and behaves as the contract says.
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace queen::test;
using nlohmann::json;
using namespace std::chrono_literals;

long long sql_count(const std::string& sql) { return std::stoll(cluster().run_sql(sql)); }

// Everything the database holds about a queue name (and the global segment count).
std::string footprint(const std::string& queue) {
    const std::string q = quote(queue);
    return cluster().run_sql(
        "SELECT format('queues=%s partitions=%s segments=%s groups=%s cursors=%s dedup=%s all_segments=%s', "
        "(SELECT count(*) FROM queen.queues WHERE name = " + q + "), "
        "(SELECT count(*) FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = " + q + "), "
        "(SELECT count(*) FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id "
        "   JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = " + q + "), "
        "(SELECT count(*) FROM queen.consumer_groups WHERE queue_name = " + q + "), "
        "(SELECT count(*) FROM queen.log_consumers c JOIN queen.queues q ON q.id = c.queue_id WHERE q.name = " + q + "), "
        "(SELECT count(*) FROM queen.log_dedup d JOIN queen.log_partitions p ON p.id = d.partition_id "
        "   JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = " + q + "), "
        "(SELECT count(*) FROM queen.log_segments))");
}

std::string empty_footprint_but_segments(const std::string& all_segments) {
    return "queues=0 partitions=0 segments=0 groups=0 cursors=0 dedup=0 all_segments=" + all_segments;
}

std::string all_segments() { return cluster().run_sql("SELECT count(*) FROM queen.log_segments"); }

struct bad_case {
    std::string name;
    std::string method;
    std::string target;
    std::string body;
    int status;
    std::string error_contains;  // the message must name the problem
};

// Asserts the answer to one bad request: status, JSON {"error": "..."} naming the problem, no
// CORS header (the request had no Origin).
void expect_error_reply(const bad_case& c, const http_reply& r) {
    SCOPED_TRACE("case '" + c.name + "': " + c.method + " " + c.target + " body=" + c.body.substr(0, 200));
    EXPECT_EQ(r.status, c.status) << r.body;
    EXPECT_FALSE(r.has_header("access-control-allow-origin"));
    ASSERT_TRUE(r.has_header("content-type"));
    EXPECT_NE(r.headers.at("content-type").find("application/json"), std::string::npos);
    json body;
    ASSERT_NO_THROW(body = r.json()) << r.body;
    ASSERT_TRUE(body.is_object()) << r.body;
    ASSERT_TRUE(body.contains("error")) << r.body;
    ASSERT_TRUE(body["error"].is_string()) << r.body;
    const auto msg = body["error"].get<std::string>();
    EXPECT_FALSE(msg.empty());
    EXPECT_NE(msg.find(c.error_contains), std::string::npos)
        << "error message '" << msg << "' does not name the problem ('" << c.error_contains << "')";
    EXPECT_EQ(msg.find("SQL"), std::string::npos) << msg;
}

// Runs the cases one by one against `port`; after each, nothing about `queues` is stored.
void run_cases(unsigned short port, const std::vector<bad_case>& cases, const std::vector<std::string>& queues) {
    http_client c("127.0.0.1", port);
    const std::string segments_before = all_segments();
    for (const auto& bc : cases) {
        auto r = c.request(bc.method, bc.target, bc.body);
        expect_error_reply(bc, r);
        for (const auto& q : queues)
            EXPECT_EQ(footprint(q), empty_footprint_but_segments(segments_before))
                << "case '" << bc.name << "' wrote something for queue " << q.substr(0, 60);
    }
}

json item(const std::string& queue, json payload = 1) { return json{{"queue", queue}, {"payload", payload}}; }

// A body whose first item is valid and whose second item is `bad`: rejecting the request
// must not store the valid one either.
std::string push_body_with(const std::string& queue, const json& bad) {
    return json{{"items", json::array({item(queue), bad})}}.dump();
}

}  // namespace

// ---------------------------------------------------------------------------------------
// BadInput
// ---------------------------------------------------------------------------------------

TEST(BadInput, PushRejectsBadBodiesAndWritesNothing) {
    const std::string q = unique_name("bad-push");
    const std::string q256 = q + std::string(256 - q.size(), 'x');
    ASSERT_EQ(q256.size(), 256u);
    const std::string tx256(256, 't');
    auto with_item = [&](json extra) {
        json it = item(q);
        for (auto& [k, v] : extra.items()) it[k] = v;
        return push_body_with(q, it);
    };
    const std::vector<bad_case> cases{
        {"malformed JSON", "POST", "/api/v1/push", R"({"items": [{"queue": ")" + q + R"(", "payload": 1})", 400,
         "malformed JSON"},
        {"trailing garbage", "POST", "/api/v1/push", json{{"items", json::array({item(q)})}}.dump() + " x", 400,
         "malformed JSON"},
        {"empty body", "POST", "/api/v1/push", "", 400, "body"},
        {"body is an array", "POST", "/api/v1/push", json::array({item(q)}).dump(), 400, "JSON object"},
        {"body is a string", "POST", "/api/v1/push", R"("items")", 400, "JSON object"},
        {"body is null", "POST", "/api/v1/push", "null", 400, "JSON object"},
        {"items missing", "POST", "/api/v1/push", json{{"itemz", json::array({item(q)})}}.dump(), 400,
         "items is required"},
        {"items null", "POST", "/api/v1/push", R"({"items": null})", 400, "items is required"},
        {"items not an array", "POST", "/api/v1/push", json{{"items", item(q)}}.dump(), 400, "items must be an array"},
        {"item not an object", "POST", "/api/v1/push", push_body_with(q, 5), 400, "items[1] must be an object"},
        {"item is a string", "POST", "/api/v1/push", push_body_with(q, q), 400, "items[1] must be an object"},
        {"queue missing", "POST", "/api/v1/push", push_body_with(q, json{{"payload", 1}}), 400,
         "items[1].queue is required"},
        {"queue null", "POST", "/api/v1/push", push_body_with(q, json{{"queue", nullptr}, {"payload", 1}}), 400,
         "items[1].queue is required"},
        {"queue not a string", "POST", "/api/v1/push", push_body_with(q, json{{"queue", 5}, {"payload", 1}}), 400,
         "items[1].queue must be a string"},
        {"queue is an array", "POST", "/api/v1/push",
         push_body_with(q, json{{"queue", json::array({q})}, {"payload", 1}}), 400, "items[1].queue must be a string"},
        {"queue empty", "POST", "/api/v1/push", push_body_with(q, json{{"queue", ""}, {"payload", 1}}), 400,
         "items[1].queue must not be empty"},
        {"queue 256 bytes", "POST", "/api/v1/push", push_body_with(q, item(q256)), 400, "items[1].queue is 256 bytes"},
        {"partition empty", "POST", "/api/v1/push", with_item({{"partition", ""}}), 400,
         "items[1].partition must not be empty"},
        {"partition a number", "POST", "/api/v1/push", with_item({{"partition", 7}}), 400,
         "items[1].partition must be a string"},
        {"partition an object", "POST", "/api/v1/push", with_item({{"partition", json::object()}}), 400,
         "items[1].partition must be a string"},
        {"partition 256 bytes", "POST", "/api/v1/push", with_item({{"partition", std::string(256, 'p')}}), 400,
         "items[1].partition is 256 bytes"},
        {"transactionId a number", "POST", "/api/v1/push", with_item({{"transactionId", 42}}), 400,
         "items[1].transactionId must be a string"},
        {"transactionId a boolean", "POST", "/api/v1/push", with_item({{"transactionId", true}}), 400,
         "items[1].transactionId must be a string"},
        {"transactionId empty", "POST", "/api/v1/push", with_item({{"transactionId", ""}}), 400,
         "items[1].transactionId must not be empty"},
        {"transactionId 256 bytes", "POST", "/api/v1/push", with_item({{"transactionId", tx256}}), 400,
         "items[1].transactionId is 256 bytes"},
        {"traceId not a UUID", "POST", "/api/v1/push", with_item({{"traceId", "not-a-uuid"}}), 400,
         "items[1].traceId must be a UUID"},
        {"traceId almost a UUID", "POST", "/api/v1/push",
         with_item({{"traceId", "0189c3a2-7b1e-7c3d-8e4f-5a6b7c8d9e0"}}), 400, "items[1].traceId must be a UUID"},
        {"traceId a number", "POST", "/api/v1/push", with_item({{"traceId", 12}}), 400, "items[1].traceId"},
    };
    run_cases(broker().port(), cases, {q, q256});

    // The same valid item alone is accepted: the rejections above were about the bad items.
    auto c = client();
    auto r = c.post("/api/v1/push", json{{"items", json::array({item(q)})}});
    ASSERT_EQ(r.status, 201) << r.body;
    EXPECT_EQ(sql_count("SELECT count(*) FROM queen.messages WHERE queue = " + quote(q)), 1);
}

TEST(BadInput, PushLimitsAnswer413AndWriteNothing) {
    broker_process limited(cluster().conninfo(), {{"QUEEN_MAX_PUSH_ITEMS", "3"}, {"QUEEN_MAX_BODY_BYTES", "4096"}});
    const std::string q = unique_name("bad-limits");

    json four = json::array();
    for (int i = 0; i < 4; ++i) four.push_back(item(q, i));
    json big = json::array({item(q, std::string(8000, 'b'))});
    const std::vector<bad_case> cases{
        {"more items than QUEEN_MAX_PUSH_ITEMS", "POST", "/api/v1/push", json{{"items", four}}.dump(), 413,
         "at most 3 items"},
        {"body beyond QUEEN_MAX_BODY_BYTES", "POST", "/api/v1/push", json{{"items", big}}.dump(), 413, "4096"},
    };
    run_cases(limited.port(), cases, {q});

    // A chunked body (no Content-Length) beyond the limit is refused the same way.
    {
        http_client raw_client = client_of(limited);
        const std::string chunk = json{{"items", big}}.dump();
        char size_hex[32];
        std::snprintf(size_hex, sizeof size_hex, "%zx", chunk.size());
        const std::string answer = raw_client.raw(
            "POST /api/v1/push HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n" + std::string(size_hex) + "\r\n" + chunk + "\r\n0\r\n\r\n");
        EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer.substr(0, 300);
        EXPECT_NE(answer.find("\"error\""), std::string::npos) << answer.substr(0, 300);
        EXPECT_EQ(footprint(q), empty_footprint_but_segments(all_segments()));
    }

    // Within both limits: accepted, all three stored in order.
    http_client c = client_of(limited);
    json three = json::array();
    for (int i = 0; i < 3; ++i) three.push_back(item(q, i));
    auto r = c.post("/api/v1/push", json{{"items", three}});
    ASSERT_EQ(r.status, 201) << r.body;
    ASSERT_EQ(r.json().size(), 3u);
    EXPECT_EQ(cluster().run_sql("SELECT string_agg(payload::text, ',' ORDER BY \"offset\") FROM queen.messages "
                                "WHERE queue = " + quote(q)),
              "0,1,2");
    // The broker survived both rejections and still serves pops.
    auto p = pop(c, q, "batch=10");
    ASSERT_EQ(p.status, 200) << p.body;
    EXPECT_EQ(p.json()["messages"].size(), 3u);
}

TEST(BadInput, AckRejectsBadBodiesAndChangesNothing) {
    const std::string q = unique_name("bad-ack");
    auto c = client();
    push_payloads(c, q, "", {json{{"n", 1}}, json{{"n", 2}}});
    auto p = pop(c, q, "batch=2");
    ASSERT_EQ(p.status, 200) << p.body;
    const json msg = p.json()["messages"][0];
    const std::string tx = msg["transactionId"], pid = msg["partitionId"], lease = msg["leaseId"];
    const std::string cursor_sql = "SELECT format('committed=%s lease=%s', committed, lease_id) FROM queen.log_consumers "
                                   "WHERE partition_id = " + pid + " AND consumer_group = '__QUEUE_MODE__'";
    const std::string cursor_before = cluster().run_sql(cursor_sql);
    ASSERT_EQ(cursor_before, "committed=0 lease=" + lease);

    auto ack_body = [&](json patch) {
        json b{{"transactionId", tx}, {"partitionId", pid}, {"leaseId", lease}, {"status", "completed"},
               {"consumerGroup", nullptr}, {"error", nullptr}};
        for (auto& [k, v] : patch.items()) {
            if (v.is_string() && v == "<erase>") b.erase(k);
            else b[k] = v;
        }
        return b;
    };
    json good_entry{{"transactionId", tx}, {"partitionId", pid}, {"leaseId", lease}, {"status", "completed"}};
    const std::vector<bad_case> cases{
        {"malformed JSON", "POST", "/api/v1/ack", "{\"transactionId\": ", 400, "malformed JSON"},
        {"body not an object", "POST", "/api/v1/ack", json::array({ack_body({})}).dump(), 400, "JSON object"},
        {"transactionId missing", "POST", "/api/v1/ack", ack_body({{"transactionId", "<erase>"}}).dump(), 400,
         "transactionId is required"},
        {"transactionId null", "POST", "/api/v1/ack", ack_body({{"transactionId", nullptr}}).dump(), 400,
         "transactionId is required"},
        {"transactionId a number", "POST", "/api/v1/ack", ack_body({{"transactionId", 5}}).dump(), 400,
         "transactionId must be a string"},
        {"partitionId missing", "POST", "/api/v1/ack", ack_body({{"partitionId", "<erase>"}}).dump(), 400,
         "partitionId is required"},
        {"partitionId empty", "POST", "/api/v1/ack", ack_body({{"partitionId", ""}}).dump(), 400,
         "partitionId is required"},
        {"unknown status", "POST", "/api/v1/ack", ack_body({{"status", "bogus"}}).dump(), 400, "status 'bogus'"},
        {"status a boolean", "POST", "/api/v1/ack", ack_body({{"status", true}}).dump(), 400, "status"},
        {"offset negative", "POST", "/api/v1/ack", ack_body({{"offset", -1}}).dump(), 400,
         "offset must be a positive integer"},
        {"offset zero", "POST", "/api/v1/ack", ack_body({{"offset", 0}}).dump(), 400,
         "offset must be a positive integer"},
        {"offset a string", "POST", "/api/v1/ack", ack_body({{"offset", "1"}}).dump(), 400,
         "offset must be a positive integer"},
        {"batch without acknowledgments", "POST", "/api/v1/ack/batch", json{{"consumerGroup", nullptr}}.dump(), 400,
         "acknowledgments is required"},
        {"batch acknowledgments not an array", "POST", "/api/v1/ack/batch",
         json{{"acknowledgments", good_entry}}.dump(), 400, "acknowledgments must be an array"},
        {"batch body an array", "POST", "/api/v1/ack/batch", json::array({good_entry}).dump(), 400, "JSON object"},
        // The first entry is valid: a rejected batch must not apply it.
        {"batch with one bad entry", "POST", "/api/v1/ack/batch",
         json{{"acknowledgments", json::array({good_entry, json{{"transactionId", tx}}})}}.dump(), 400,
         "acknowledgments[1].partitionId is required"},
        {"batch entry with unknown status", "POST", "/api/v1/ack/batch",
         json{{"acknowledgments", json::array({good_entry, json{{"transactionId", tx}, {"partitionId", pid},
                                                                {"status", "done"}}})}}
             .dump(),
         400, "acknowledgments[1].status 'done'"},
    };
    const std::string segments_before = all_segments();
    for (const auto& bc : cases) {
        auto r = c.request(bc.method, bc.target, bc.body);
        expect_error_reply(bc, r);
        EXPECT_EQ(cluster().run_sql(cursor_sql), cursor_before) << "case '" << bc.name << "' changed the cursor";
    }
    EXPECT_EQ(all_segments(), segments_before);

    // The lease is still intact: a correct ack of the first message commits exactly it.
    auto a = ack(c, msg);
    EXPECT_EQ(a["success"], true) << a.dump();
    EXPECT_TRUE(a["error"].is_null()) << a.dump();
    EXPECT_EQ(cluster().run_sql("SELECT committed FROM queen.log_consumers WHERE partition_id = " + pid +
                                " AND consumer_group = '__QUEUE_MODE__'"),
              "1");
}

TEST(BadInput, PopRejectsBadQueryAndRegistersNothing) {
    const std::string q = unique_name("bad-pop");
    const std::string q256 = q + std::string(256 - q.size(), 'x');
    const std::string base = "/api/v1/pop/queue/" + url_encode(q);
    const std::vector<bad_case> cases{
        {"batch negative", "GET", base + "?batch=-1", "", 400, "batch"},
        {"batch zero", "GET", base + "?batch=0", "", 400, "batch"},
        {"batch not a number", "GET", base + "?batch=abc", "", 400, "batch must be an integer"},
        {"batch with trailing junk", "GET", base + "?batch=5x", "", 400, "batch must be an integer"},
        {"batch on the partition route", "GET", base + "/partition/Default?batch=0", "", 400, "batch"},
        {"batch above the limit", "GET", base + "?batch=10001", "", 400, "batch must be between 1 and 10000"},
        {"partitions zero", "GET", base + "?partitions=0", "", 400, "partitions"},
        {"timeout not a number", "GET", base + "?wait=true&timeout=soon", "", 400, "timeout must be an integer"},
        {"consumerGroup 256 bytes", "GET", base + "?consumerGroup=" + std::string(256, 'g'), "", 400,
         "consumerGroup"},
        {"timeout negative", "GET", base + "?wait=true&timeout=-1", "", 400, "timeout"},
        {"subscriptionFrom garbage", "GET", base + "?consumerGroup=g1&subscriptionFrom=garbage", "", 400,
         "subscriptionFrom"},
        {"subscriptionFrom half a date", "GET", base + "?consumerGroup=g1&subscriptionFrom=2024-13", "", 400,
         "subscriptionFrom"},
        {"queue name 256 bytes", "GET", "/api/v1/pop/queue/" + url_encode(q256), "", 400, "queue is 256 bytes"},
        {"partition name 256 bytes", "GET", base + "/partition/" + std::string(256, 'p'), "", 400,
         "partition is 256 bytes"},
        {"malformed percent-escape", "GET", "/api/v1/pop/queue/" + url_encode(q) + "%zz", "", 400, "percent-escape"},
    };
    run_cases(broker().port(), cases, {q, q256});
}

TEST(BadInput, ConfigureRejectsBadBodiesAndWritesNothing) {
    const std::string q = unique_name("bad-configure");
    const std::string q256 = q + std::string(256 - q.size(), 'x');
    auto with_options = [&](json options) { return json{{"queue", q}, {"options", options}}.dump(); };
    const std::vector<bad_case> cases{
        {"malformed JSON", "POST", "/api/v1/configure", "{\"queue\": \"" + q + "\",", 400, "malformed JSON"},
        {"body not an object", "POST", "/api/v1/configure", json::array({q}).dump(), 400, "JSON object"},
        {"queue missing", "POST", "/api/v1/configure", json{{"options", {{"leaseTime", 10}}}}.dump(), 400,
         "queue is required"},
        {"queue not a string", "POST", "/api/v1/configure", json{{"queue", 12}}.dump(), 400,
         "queue must be a string"},
        {"queue 256 bytes", "POST", "/api/v1/configure", json{{"queue", q256}}.dump(), 400, "queue is 256 bytes"},
        {"namespace not a string", "POST", "/api/v1/configure", json{{"queue", q}, {"namespace", 3}}.dump(), 400,
         "namespace must be a string"},
        {"options not an object", "POST", "/api/v1/configure", with_options(json::array({1})), 400,
         "options must be an object"},
        {"options a string", "POST", "/api/v1/configure", with_options("leaseTime=5"), 400,
         "options must be an object"},
        {"leaseTime a string", "POST", "/api/v1/configure", with_options({{"leaseTime", "x"}}), 400,
         "options.leaseTime must be an integer"},
        {"leaseTime a fraction", "POST", "/api/v1/configure", with_options({{"leaseTime", 1.5}}), 400,
         "options.leaseTime must be an integer"},
        {"retentionEnabled a number", "POST", "/api/v1/configure", with_options({{"retentionEnabled", 1}}), 400,
         "options.retentionEnabled must be a boolean"},
        {"deadLetterQueue a string", "POST", "/api/v1/configure", with_options({{"deadLetterQueue", "true"}}), 400,
         "options.deadLetterQueue must be a boolean"},
        {"leaseTime zero", "POST", "/api/v1/configure", with_options({{"leaseTime", 0}}), 400, "options.leaseTime"},
        {"retryLimit negative", "POST", "/api/v1/configure", with_options({{"retryLimit", -1}}), 400,
         "options.retryLimit"},
        {"retryDelay negative", "POST", "/api/v1/configure", with_options({{"retryDelay", -5}}), 400,
         "options.retryDelay"},
        // 2^64 - 10^6 is -10^6 read as a signed integer; doubles of 2^63 and more have no int64.
        {"priority wrapping", "POST", "/api/v1/configure",
         "{\"queue\":\"" + q + "\",\"options\":{\"priority\":18446744073708551616}}", 400,
         "options.priority must be between -1000000 and 1000000, got 18446744073708551616"},
        {"maxSize past int64", "POST", "/api/v1/configure", with_options({{"maxSize", 1e19}}), 400,
         "options.maxSize must be between"},
        {"ttl past int64", "POST", "/api/v1/configure", with_options({{"ttl", -9.3e18}}), 400,
         "options.ttl must be between"},
        // One valid option before a bad one: nothing of the request is applied.
        {"valid then invalid option", "POST", "/api/v1/configure",
         with_options({{"leaseTime", 10}, {"maxSize", -1}}), 400, "options.maxSize"},
    };
    run_cases(broker().port(), cases, {q, q256});
}

TEST(BadInput, UnknownRouteIs404AndWrongMethodIs405) {
    const std::vector<bad_case> cases{
        {"unknown route", "GET", "/api/v1/nope", "", 404, "/api/v1/nope"},
        {"unknown route POST", "POST", "/api/v1/pushes", "{}", 404, "/api/v1/pushes"},
        {"unknown deeper route", "GET", "/api/v1/pop/queue/a/b/c/d", "", 404, "/api/v1/pop/queue/a/b/c/d"},
        {"push with GET", "GET", "/api/v1/push", "", 405, "GET"},
        {"configure with DELETE", "DELETE", "/api/v1/configure", "", 405, "DELETE"},
        {"pop with POST", "POST", "/api/v1/pop/queue/some-queue", "{}", 405, "POST"},
        {"ack with PUT", "PUT", "/api/v1/ack", "{}", 405, "PUT"},
        {"ack batch with GET", "GET", "/api/v1/ack/batch", "", 405, "GET"},
    };
    http_client c = client();
    for (const auto& bc : cases) {
        auto r = c.request(bc.method, bc.target, bc.body);
        expect_error_reply(bc, r);
        if (bc.status == 405) {
            ASSERT_TRUE(r.has_header("allow")) << bc.name;
            EXPECT_FALSE(r.headers.at("allow").empty()) << bc.name;
            EXPECT_EQ(r.headers.at("allow").find(bc.method), std::string::npos)
                << bc.name << ": Allow lists the refused method: " << r.headers.at("allow");
        }
    }
    // Allow names the method that does work.
    auto r = c.get("/api/v1/push");
    ASSERT_TRUE(r.has_header("allow"));
    EXPECT_NE(r.headers.at("allow").find("POST"), std::string::npos) << r.headers.at("allow");
}

TEST(BadInput, MalformedHttpRequestIs400) {
    http_client c = client();
    const std::string answer = c.raw("THIS IS NOT HTTP\r\n\r\n");
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer.substr(0, 300);
    // Our text, naming the part that is wrong.
    EXPECT_NE(answer.find("{\"error\":\"malformed HTTP request: bad "), std::string::npos) << answer.substr(0, 300);
    EXPECT_NE(answer.find("\"error\""), std::string::npos) << answer.substr(0, 300);
    // The broker is unharmed.
    http_client d = client();
    EXPECT_EQ(d.get("/health").status, 200);
}

TEST(BadInput, OptionsAnswers204AndNoAnswerCarriesCorsWithoutAnOrigin) {
    http_client c = client();
    for (const std::string target : {"/api/v1/push", "/api/v1/pop/queue/x", "/api/v1/ack", "/api/v1/configure"}) {
        auto r = c.request("OPTIONS", target, "", {{"Access-Control-Request-Method", "POST"}});
        SCOPED_TRACE(target);
        EXPECT_EQ(r.status, 204);
        EXPECT_TRUE(r.body.empty());
        EXPECT_FALSE(r.has_header("access-control-allow-origin"));
        ASSERT_TRUE(r.has_header("access-control-allow-methods"));
        for (const char* m : {"GET", "POST", "DELETE"})
            EXPECT_NE(r.headers.at("access-control-allow-methods").find(m), std::string::npos) << m;
        ASSERT_TRUE(r.has_header("access-control-allow-headers"));
        EXPECT_NE(r.headers.at("access-control-allow-headers").find("Content-Type"), std::string::npos);
    }
    // Successful answers carry none either (errors are covered by every case above); the
    // origins that get one are docs/security.md's (HostileClients.*Origins*).
    const std::string q = unique_name("cors");
    std::vector<http_reply> replies;
    replies.push_back(c.get("/health"));
    replies.push_back(c.post("/api/v1/configure", json{{"queue", q}}));
    replies.push_back(c.post("/api/v1/push", json{{"items", json::array({item(q)})}}));
    replies.push_back(pop(c, q));
    replies.push_back(pop(c, q));  // 204: the only message is leased
    replies.push_back(c.post("/api/v1/push", json{{"items", json::array()}}));
    ASSERT_EQ(replies[3].status, 200);
    EXPECT_EQ(replies[4].status, 204);
    EXPECT_TRUE(replies[4].body.empty());
    EXPECT_EQ(replies[5].status, 201);
    EXPECT_EQ(replies[5].body, "[]");
    replies.push_back(c.post("/api/v1/ack", json{{"transactionId", replies[3].json()["messages"][0]["transactionId"]},
                                                 {"partitionId", replies[3].json()["messages"][0]["partitionId"]}}));
    for (std::size_t i = 0; i < replies.size(); ++i)
        EXPECT_FALSE(replies[i].has_header("access-control-allow-origin")) << "reply " << i;
}

TEST(BadInput, UrlValuesThatAreNotUtf8Are400AndEchoesAreUtf8) {
    const std::string q = unique_name("bad-utf8");
    const std::vector<bad_case> cases{
        {"queue path", "GET", "/api/v1/resources/queues/q%ff", "", 400, "queue is not valid UTF-8"},
        {"status queue path", "GET", "/api/v1/status/queues/q%c3", "", 400, "queue is not valid UTF-8"},
        {"pop queue", "GET", "/api/v1/pop/queue/" + q + "%ff", "", 400, "queue is not valid UTF-8"},
        {"pop partition", "GET", "/api/v1/pop/queue/" + q + "/partition/p%e2%82", "", 400,
         "partition is not valid UTF-8"},
        {"pop group", "GET", "/api/v1/pop/queue/" + q + "?consumerGroup=g%ff", "", 400,
         "consumerGroup is not valid UTF-8"},
        {"delete queue", "DELETE", "/api/v1/resources/queues/" + q + "%ff", "", 400, "queue is not valid UTF-8"},
        {"group", "DELETE", "/api/v1/consumer-groups/g%ff", "", 400, "group is not valid UTF-8"},
        {"seek", "POST", "/api/v1/consumer-groups/g/queues/" + q + "%ff/seek", "{}", 400,
         "queue is not valid UTF-8"},
        {"lease", "POST", "/api/v1/lease/%ff/extend", "{}", 400, "leaseId is not valid UTF-8"},
        {"message", "GET", "/api/v1/messages/%ff/tx", "", 400, "partitionId is not valid UTF-8"},
        {"trace name", "GET", "/api/v1/traces/by-name/%fe", "", 400, "name is not valid UTF-8"},
        {"messages filter", "GET", "/api/v1/messages?queue=%c0%af", "", 400, "queue is not valid UTF-8"},
        {"dlq filter", "GET", "/api/v1/dlq?queue=" + q + "%ff", "", 400, "queue is not valid UTF-8"},
        {"query name", "GET", "/api/v1/status?x%ff=1", "", 400, "a query parameter name is not valid UTF-8"},
        {"dashboard route", "GET", "/queues?tab=%ff", "", 400, "tab is not valid UTF-8"},
    };
    run_cases(broker().port(), cases, {q});
    // Raw bytes that are not UTF-8 in the path are echoed as U+FFFD, never as they came.
    http_client c = client();
    const std::string answer = c.raw("GET /api/v1/nope\xff\x01 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(answer.rfind("HTTP/1.1 4", 0), 0u) << answer.substr(0, 300);
    EXPECT_EQ(answer.find('\xff'), std::string::npos) << answer;
    const auto body_at = answer.find("\r\n\r\n");
    ASSERT_NE(body_at, std::string::npos);
    const auto body = json::parse(answer.substr(body_at + 4), nullptr, false);
    ASSERT_FALSE(body.is_discarded()) << answer;
    if (answer.rfind("HTTP/1.1 404", 0) == 0) {
        EXPECT_EQ(body["error"], "no route for GET /api/v1/nope\xef\xbf\xbd\\x01") << answer;
    }
    EXPECT_EQ(client().get("/health").status, 200);
}

TEST(BadInput, TimeWindowsNearYearOneStopThereOrAre400) {
    http_client c = client();
    for (const std::string route :
         {"/api/v1/status", "/api/v1/status/analytics", "/api/v1/analytics/system-metrics",
          "/api/v1/analytics/worker-metrics", "/api/v1/analytics/queue-lag", "/api/v1/analytics/queue-ops",
          "/api/v1/analytics/queue-parked-replicas", "/api/v1/analytics/retention", "/api/v1/messages"}) {
        SCOPED_TRACE(route);
        // The window reaches back past year 1 from its `to`: it stops at 0001-01-01.
        auto r = c.get(route + "?to=0001-01-01T00:00:00Z");
        EXPECT_EQ(r.status, 200) << r.body.substr(0, 300);
        // A `to` before year 1 is no time.
        auto before = c.get(route + "?to=0001-01-01T00:30:00%2B01:00");
        EXPECT_EQ(before.status, 400) << before.body.substr(0, 300);
        EXPECT_NE(before.json().value("error", "").find("to must be an ISO-8601 time stamp"), std::string::npos)
            << before.body;
    }
    const auto status = get_ok(c, "/api/v1/status/analytics?to=0001-01-01T00:00:00Z");
    EXPECT_EQ(status.value("from", json()).dump(), "\"0001-01-01T00:00:00.000000Z\"") << status.dump().substr(0, 300);
}

// ---------------------------------------------------------------------------------------
// TolerantInput
// ---------------------------------------------------------------------------------------

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
