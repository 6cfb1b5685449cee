#pragma once
// Helpers of the BadInput and TolerantInput tests (bad_input_*_test.cpp, tolerant_input_test.cpp):
// a table row of one bad request, the check of its answer, and what the database holds about a
// queue name, so that each rejected request is shown to have written nothing.
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace queen::test::bad_input_support {

using nlohmann::json;

// The number a one-value SQL query (a count) answers on the shared cluster.
inline long long sql_count(const std::string& sql) { return std::stoll(cluster().run_sql(sql)); }

// Everything the database holds about a queue name (and the global segment count).
inline std::string footprint(const std::string& queue) {
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

// footprint() of a queue name that has nothing stored, the database holding `all_segments` segments in all.
inline std::string empty_footprint_but_segments(const std::string& all_segments) {
    return "queues=0 partitions=0 segments=0 groups=0 cursors=0 dedup=0 all_segments=" + all_segments;
}

// How many log segments the database holds, over every queue.
inline std::string all_segments() { return cluster().run_sql("SELECT count(*) FROM queen.log_segments"); }

// One row of a table of bad requests: the request and the answer it must get.
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
inline void expect_error_reply(const bad_case& c, const http_reply& r) {
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
inline void run_cases(unsigned short port, const std::vector<bad_case>& cases, const std::vector<std::string>& queues) {
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

// A push item of `payload` to `queue`.
inline json item(const std::string& queue, json payload = 1) { return json{{"queue", queue}, {"payload", payload}}; }

// A body whose first item is valid and whose second item is `bad`: rejecting the request
// must not store the valid one either.
inline std::string push_body_with(const std::string& queue, const json& bad) {
    return json{{"items", json::array({item(queue), bad})}}.dump();
}

}  // namespace queen::test::bad_input_support
