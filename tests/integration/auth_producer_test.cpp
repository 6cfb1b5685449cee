// producerSub end to end: the validated token's sub is stamped on every pushed message (plain
// pushes, transaction pushes, pushes that went through the spool), a producerSub in the body
// is ignored, and the value shows in pops, the message browser, dead letters and
// queen.messages.
#include "auth_support.hpp"

#include <gtest/gtest.h>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace auth_support;

std::string stored_producer(const std::string& queue) {
    return cluster().run_sql("SELECT string_agg(coalesce(producer_sub, 'null'), ',' ORDER BY \"offset\") "
                             "FROM queen.messages WHERE queue = " + quote(queue));
}

class AuthProducer : public ::testing::Test {
protected:
    void TearDown() override { cluster().run_sql("SELECT queen.set_maintenance(false, false)"); }
};

TEST_F(AuthProducer, AStreamCycleStampsItsSinkPushesWithTheTokensSub) {
    broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"}, {"JWT_SECRET", secret}});
    auto c = client_of(b);
    const auto token = jwt::token("HS256", jwt::claims("svc-stream", "read-write"), nullptr, secret);
    const auto source = unique_name("auth-stream-src"), sink = unique_name("auth-stream-sink");
    auto reg = send(c, "POST", "/streams/v1/queries", token,
                    json{{"name", source}, {"source_queue", source}, {"sink_queue", sink}, {"config_hash", "h"}}.dump());
    ASSERT_EQ(reg.status, 200) << reg.body;
    ASSERT_EQ(send(c, "POST", "/api/v1/push", token, push_body(source)).status, 201);
    auto popped = send(c, "GET", "/api/v1/pop/queue/" + source + "?wait=false&consumerGroup=streams." + source, token);
    ASSERT_EQ(popped.status, 200) << popped.body;
    const json m = popped.json()["messages"][0];
    const json cycle{{"query_id", reg.json()["query_id"]},
                     {"partition_id", m["partitionId"]},
                     {"consumer_group", "streams." + source},
                     {"push_items", {{{"queue", sink}, {"payload", 1}, {"producerSub", "forged"}}}},
                     {"ack", {{"transactionId", m["transactionId"]}, {"leaseId", m["leaseId"]}}}};
    auto r = send(c, "POST", "/streams/v1/cycle", token, cycle.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_EQ(r.json()["success"], true) << r.body;
    EXPECT_EQ(stored_producer(sink), "svc-stream");
}

TEST_F(AuthProducer, TheTokensSubIsStampedAndTheBodysIgnored) {
    broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"}, {"JWT_SECRET", secret}});
    auto c = client_of(b);
    const auto producer = jwt::token("HS256", jwt::claims("svc-orders", "admin"), nullptr, secret);
    json anonymous_claims = jwt::claims("", "read-write");
    anonymous_claims.erase("sub");
    const auto anonymous = jwt::token("HS256", anonymous_claims, nullptr, secret);
    const auto q = unique_name("auth-producer");

    auto pushed = send(c, "POST", "/api/v1/push", producer, push_body(q, json{{"producerSub", "forged"}}));
    ASSERT_EQ(pushed.status, 201) << pushed.body;
    const json tx{{"operations",
                   {{{"type", "push"}, {"items", {{{"queue", q}, {"payload", 2}, {"producerSub", "forged"}}}}}}}};
    auto t = send(c, "POST", "/api/v1/transaction", producer, tx.dump());
    ASSERT_EQ(t.status, 200) << t.body;
    ASSERT_EQ(send(c, "POST", "/api/v1/push", anonymous, push_body(q)).status, 201);
    EXPECT_EQ(stored_producer(q), "svc-orders,svc-orders,null");

    // Pops.
    auto popped = send(c, "GET", "/api/v1/pop/queue/" + q + "?batch=10&wait=false", producer);
    ASSERT_EQ(popped.status, 200) << popped.body;
    const auto messages = popped.json()["messages"];
    ASSERT_EQ(messages.size(), 3u);
    EXPECT_EQ(messages[0]["producerSub"], "svc-orders");
    EXPECT_EQ(messages[1]["producerSub"], "svc-orders");
    EXPECT_TRUE(messages[2]["producerSub"].is_null());

    // The message browser, listed and one by one.
    auto listed = send(c, "GET", "/api/v1/messages?queue=" + q, producer);
    ASSERT_EQ(listed.status, 200) << listed.body;
    std::vector<json> subs;
    const json listing = listed.json();
    for (const auto& m : listing["messages"]) subs.push_back(m["producerSub"]);
    EXPECT_EQ(subs, (std::vector<json>{nullptr, "svc-orders", "svc-orders"}));  // newest first
    const json first = pushed.json()[0];
    auto one = send(c, "GET",
                    "/api/v1/messages/" + first["partition_id"].get<std::string>() + "/" +
                        url_encode(first["transaction_id"].get<std::string>()),
                    producer);
    ASSERT_EQ(one.status, 200) << one.body;
    EXPECT_EQ(one.json()["producerSub"], "svc-orders");

    // Dead letters.
    json dead{{"transactionId", messages[0]["transactionId"]},
              {"partitionId", messages[0]["partitionId"]},
              {"leaseId", messages[0]["leaseId"]},
              {"status", "dlq"},
              {"error", "boom"}};
    ASSERT_EQ(send(c, "POST", "/api/v1/ack", producer, dead.dump()).status, 200);
    auto dlq = send(c, "GET", "/api/v1/dlq?queue=" + q, producer);
    ASSERT_EQ(dlq.status, 200) << dlq.body;
    ASSERT_EQ(dlq.json()["messages"].size(), 1u) << dlq.body;
    EXPECT_EQ(dlq.json()["messages"][0]["producerSub"], "svc-orders");
}

TEST_F(AuthProducer, SpooledPushesKeepTheirProducer) {
    broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"}, {"JWT_SECRET", secret}});
    auto c = client_of(b);
    const auto admin = jwt::token("HS256", jwt::claims("ops", "admin"), nullptr, secret);
    const auto producer = jwt::token("HS256", jwt::claims("svc-spooled", "read-write"), nullptr, secret);
    const auto q = unique_name("auth-spool");
    ASSERT_EQ(send(c, "POST", "/api/v1/system/maintenance", admin, R"({"enabled":true})").status, 200);
    auto r = send(c, "POST", "/api/v1/push", producer, push_body(q, json{{"producerSub", "forged"}}));
    ASSERT_EQ(r.status, 201) << r.body;
    EXPECT_EQ(stored_messages(q), 0) << "spooled, not stored yet";
    ASSERT_EQ(send(c, "POST", "/api/v1/system/maintenance", admin, R"({"enabled":false})").status, 200);
    ASSERT_TRUE(eventually([&] { return stored_messages(q) == 1; }));
    EXPECT_EQ(stored_producer(q), "svc-spooled");
}

}  // namespace
}  // namespace queen::test
