// BadInput on the ack and pop routes (docs/http-api.md, "Conventions" and "What existing clients
// rely on"): bad ack bodies (single and batch) are 400 and leave the cursor and the lease as they
// were; bad pop queries are 400 and register no queue, partition or group.
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
