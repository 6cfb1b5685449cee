// BadInput at the HTTP boundary, across routes (docs/http-api.md, "Conventions"): unknown routes
// 404, wrong methods 405 with an Allow header, a request that is not HTTP 400, OPTIONS 204 and no
// CORS header on any answer without an Origin, URL values that are not UTF-8 400 (and echoes that
// stay UTF-8), time windows that reach back past year one.
//
// Every really wrong input is answered with the right 4xx and a JSON body {"error": "<message
// naming the problem>"} (valid UTF-8, without CORS headers for a client that sends no Origin),
// and NOTHING is written for a rejected request (asserted on the database for a unique queue
// name, case by case). The other BadInput routes: bad_input_*_test.cpp.
#include "bad_input_support.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace {

using namespace queen::test;
using namespace queen::test::bad_input_support;
using nlohmann::json;

}  // namespace

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
