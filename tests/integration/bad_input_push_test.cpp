// BadInput on the push route (docs/http-api.md, "Conventions" and "What existing clients rely
// on"): bad bodies and items are 400, pushes beyond QUEEN_MAX_PUSH_ITEMS or QUEEN_MAX_BODY_BYTES
// (with and without a Content-Length) 413.
//
// Every really wrong input is answered with the right 4xx and a JSON body {"error": "<message
// naming the problem>"} (valid UTF-8, without CORS headers for a client that sends no Origin),
// and NOTHING is written for a rejected request (asserted on the database for a unique queue
// name, case by case). The other BadInput routes: bad_input_*_test.cpp.
#include "bad_input_support.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace queen::test;
using namespace queen::test::bad_input_support;
using nlohmann::json;

}  // namespace

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
