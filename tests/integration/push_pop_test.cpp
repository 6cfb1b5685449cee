// Push, pop and ack through the real broker and database: fields, order, leases, groups.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <set>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;

TEST(PushPop, PopReturnsPushedMessagesInOffsetOrderWithEveryField) {
    auto c = client();
    auto q = unique_name("fields");
    auto pushed = push_payloads(c, q, "", {json{{"n", 1}}, json("two"), json(nullptr)});
    ASSERT_EQ(pushed.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(pushed[i]["index"], i);
        EXPECT_EQ(pushed[i]["status"], "queued");
        EXPECT_EQ(pushed[i]["offset"], i + 1);
        EXPECT_EQ(pushed[i]["queueName"], q);
        EXPECT_TRUE(pushed[i]["transaction_id"].is_string());
    }
    auto r = pop(c, q, "batch=10");
    ASSERT_EQ(r.status, 200) << r.body;
    auto body = r.json();
    EXPECT_EQ(body["success"], true);
    EXPECT_EQ(body["queue"], q);
    EXPECT_EQ(body["partition"], "Default");
    EXPECT_EQ(body["consumerGroup"], "__QUEUE_MODE__");
    EXPECT_EQ(body["partitionsClaimed"], 1);
    auto& msgs = body["messages"];
    ASSERT_EQ(msgs.size(), 3u);
    EXPECT_EQ(msgs[0]["data"], json({{"n", 1}}));
    EXPECT_EQ(msgs[1]["data"], "two");
    EXPECT_TRUE(msgs[2]["data"].is_null());
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(msgs[i]["id"], pushed[i]["message_id"]);
        EXPECT_EQ(msgs[i]["transactionId"], pushed[i]["transaction_id"]);
        EXPECT_EQ(msgs[i]["offset"], i + 1);
        EXPECT_EQ(msgs[i]["partitionId"], pushed[i]["partition_id"]);
        EXPECT_EQ(msgs[i]["partition"], "Default");
        EXPECT_EQ(msgs[i]["leaseId"], body["leaseId"]);
        EXPECT_EQ(msgs[i]["consumerGroup"], "__QUEUE_MODE__");
        EXPECT_TRUE(msgs[i]["traceId"].is_null());
        EXPECT_TRUE(msgs[i]["producerSub"].is_null());
        EXPECT_EQ(msgs[i]["createdAt"].get<std::string>().size(), 27u);  // 2026-04-26T10:59:28.267966Z
    }
    // The database holds one segment with the three messages, decodable by plain SQL.
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.log_segments s JOIN queen.log_partitions p ON "
                       "p.id = s.partition_id JOIN queen.queues qu ON qu.id = p.queue_id WHERE qu.name = '" + q + "'"),
              1);
    EXPECT_EQ(data_value("SELECT string_agg(payload::text, '|' ORDER BY \"offset\") FROM queen.messages "
                                "WHERE queue = '" + q + "'"),
              "{\"n\": 1}|\"two\"|null");
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.message('" + msgs[1]["id"].get<std::string>() +
                       "'::uuid) WHERE payload = '\"two\"'"),
              1);
}

TEST(PushPop, EmptyPopIs204WithNoBodyAtAll) {
    auto c = client();
    auto r = pop(c, unique_name("never-pushed"));
    EXPECT_EQ(r.status, 204);
    EXPECT_TRUE(r.body.empty());
    EXPECT_FALSE(r.has_header("content-length") && r.headers["content-length"] != "0");
    EXPECT_FALSE(r.has_header("access-control-allow-origin"));  // no Origin, no CORS header
    auto raw = c.raw("GET /api/v1/pop/queue/" + unique_name("raw") + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(raw.rfind("HTTP/1.1 204", 0), 0u) << raw;
    EXPECT_EQ(raw.find("Content-Length"), std::string::npos) << raw;
    EXPECT_EQ(raw.substr(raw.size() - 4), "\r\n\r\n") << "a 204 carries nothing after its headers";
}

TEST(PushPop, TraceIdIsEchoedLowerCase) {
    auto c = client();
    auto q = unique_name("trace");
    json items = json::array({{{"queue", q}, {"payload", 1}, {"traceId", "6F9619FF-8B86-D011-B42D-00CF4FC964FF"}}});
    auto pushed = c.post("/api/v1/push", json{{"items", items}}).json();
    EXPECT_EQ(pushed[0]["trace_id"], "6f9619ff-8b86-d011-b42d-00cf4fc964ff");
    auto msg = pop(c, q).json()["messages"][0];
    EXPECT_EQ(msg["traceId"], "6f9619ff-8b86-d011-b42d-00cf4fc964ff");
}

TEST(PushPop, LeasedPartitionIsNotHandedOutAgainAndAckFreesItAtOnce) {
    auto c = client();
    auto q = unique_name("lease");
    push_payloads(c, q, "", {json(1), json(2)});
    auto first = pop(c, q);  // batch=1: offset 1 leased
    ASSERT_EQ(first.status, 200);
    EXPECT_EQ(pop(c, q).status, 204) << "the partition is leased";
    auto a = ack(c, first.json()["messages"][0]);
    EXPECT_EQ(a["success"], true);
    EXPECT_EQ(a["leaseReleased"], true);
    auto second = pop(c, q);
    ASSERT_EQ(second.status, 200) << "an acked lease is free at once";
    EXPECT_EQ(second.json()["messages"][0]["data"], 2);
}

TEST(PushPop, NoHeadOfLineBlockingAcrossPartitions) {
    auto c = client();
    auto q = unique_name("hol");
    push_payloads(c, q, "slow", {json("s1"), json("s2")});
    push_payloads(c, q, "fast", {json("f1"), json("f2")});
    auto held = pop(c, q, "batch=1");
    ASSERT_EQ(held.status, 200);
    std::string held_partition = held.json()["partition"];
    // The held partition stays leased and unacked; the other one is served regardless.
    auto other = pop(c, q, "batch=10");
    ASSERT_EQ(other.status, 200);
    EXPECT_NE(other.json()["partition"], held_partition);
    EXPECT_EQ(other.json()["messages"].size(), 2u);
    auto other2 = pop(c, q, "batch=10");
    EXPECT_EQ(other2.status, 204) << "both partitions are leased now";
}

TEST(PushPop, PartitionRouteServesOnlyThatPartition) {
    auto c = client();
    auto q = unique_name("route");
    push_payloads(c, q, "a", {json("a1")});
    push_payloads(c, q, "b", {json("b1")});
    auto r = pop(c, q, "batch=10", "b");
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.json()["messages"].size(), 1u);
    EXPECT_EQ(r.json()["messages"][0]["data"], "b1");
    EXPECT_EQ(pop(c, q, "", "missing").status, 204) << "a pop never answers 404";
}

TEST(PushPop, MultiPartitionPopSharesOneLeaseAndBatchCapsTheTotal) {
    auto c = client();
    auto q = unique_name("multi");
    for (int p = 0; p < 3; ++p) push_payloads(c, q, "p" + std::to_string(p), {json(1), json(2), json(3)});
    auto r = pop(c, q, "batch=7&partitions=3");
    ASSERT_EQ(r.status, 200);
    auto body = r.json();
    EXPECT_EQ(body["partitionsClaimed"], 3);
    EXPECT_EQ(body["messages"].size(), 7u);
    std::set<std::string> leases;
    for (auto& m : body["messages"]) leases.insert(m["leaseId"].get<std::string>());
    EXPECT_EQ(leases.size(), 1u);
}

TEST(PushPop, CommitOnDeliveryIsAutoAckUnderNewerQueenClientsName) {
    auto c = client();
    auto q = unique_name("cod");
    push_payloads(c, q, "p", {json(1), json(2), json(3), json(4), json(5)});
    // Committed on delivery: no lease, and the next pop of the partition goes on after it.
    auto first = pop(c, q, "batch=2&commitOnDelivery=true", "p");
    ASSERT_EQ(first.status, 200) << first.body;
    EXPECT_EQ(first.json()["leaseId"], "");
    EXPECT_EQ(first.json()["messages"][1]["data"], 2);
    auto second = pop(c, q, "batch=2&autoAck=true&commitOnDelivery=true", "p");
    ASSERT_EQ(second.status, 200) << second.body;
    EXPECT_EQ(second.json()["messages"][0]["data"], 3);
    EXPECT_EQ(std::stoll(data_value("SELECT lc.committed FROM queen.log_consumers lc JOIN queen.log_partitions p "
                                 "ON p.id = lc.partition_id JOIN queen.queues qu ON qu.id = p.queue_id "
                                 "WHERE qu.name = " + quote(q) + " ORDER BY lc.version DESC LIMIT 1")),
              4);
    // The two names disagreeing is a 400 that changes nothing.
    for (const char* query : {"autoAck=true&commitOnDelivery=false", "autoAck=false&commitOnDelivery=true"}) {
        auto bad = pop(c, q, query, "p");
        EXPECT_EQ(bad.status, 400) << query;
        EXPECT_NE(bad.body.find("commitOnDelivery"), std::string::npos) << bad.body;
    }
    auto rest = pop(c, q, "batch=5&commitOnDelivery=false", "p");
    ASSERT_EQ(rest.status, 200) << rest.body;
    EXPECT_EQ(rest.json()["messages"].size(), 1u);
    EXPECT_EQ(rest.json()["messages"][0]["data"], 5);
    EXPECT_NE(rest.json()["leaseId"], "") << "commitOnDelivery=false leases, as autoAck=false";
}

TEST(PushPop, FairnessOldestWaitingMessageFirst) {
    auto c = client();
    auto q = unique_name("fair");
    push_payloads(c, q, "old", {json("o")});
    push_payloads(c, q, "young", {json("y")});
    auto r = pop(c, q);
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.json()["partition"], "old");
}

TEST(PushPop, LeaseExpiryRedeliversTheSpanAndCountsOneAttempt) {
    auto c = client();
    auto q = unique_name("expiry");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"leaseTime", 1}}}}).status, 200);
    push_payloads(c, q, "", {json(1), json(2)});
    auto first = pop(c, q, "batch=2").json();
    // The consumer dies: no ack. After the lease, the same span comes back.
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    auto again = pop(c, q, "batch=2");
    ASSERT_EQ(again.status, 200);
    auto second = again.json();
    EXPECT_NE(second["leaseId"], first["leaseId"]);
    ASSERT_EQ(second["messages"].size(), 2u);
    EXPECT_EQ(second["messages"][0]["id"], first["messages"][0]["id"]);
    EXPECT_EQ(second["messages"][1]["id"], first["messages"][1]["id"]);
    EXPECT_EQ(data_value("SELECT attempts || '@' || attempts_offset FROM queen.log_consumers c JOIN "
                                "queen.queues q ON q.id = c.queue_id WHERE q.name = '" + q + "'"),
              "1@1");
    // An ack under the expired lease is refused; under the new one it works.
    EXPECT_EQ(ack(c, first["messages"][1])["error"], "unresolvable");
    EXPECT_EQ(ack(c, second["messages"][1])["success"], true);
}

TEST(PushPop, TwoGroupsEachGetEveryMessage) {
    auto c = client();
    auto q = unique_name("groups");
    push_payloads(c, q, "", {json(1), json(2), json(3)});
    for (std::string g : {"g1", "g2"}) {
        auto r = pop(c, q, "batch=10&consumerGroup=" + g);
        ASSERT_EQ(r.status, 200);
        auto msgs = r.json()["messages"];
        ASSERT_EQ(msgs.size(), 3u);
        for (auto& m : msgs) EXPECT_EQ(m["consumerGroup"], g);
        auto a = c.post("/api/v1/ack", json{{"transactionId", msgs[2]["transactionId"]},
                                            {"partitionId", msgs[2]["partitionId"]},
                                            {"consumerGroup", g}});
        EXPECT_EQ(a.json()["success"], true);
    }
    EXPECT_EQ(pop(c, q, "consumerGroup=g1").status, 204);
    EXPECT_EQ(pop(c, q, "batch=10").json()["messages"].size(), 3u) << "queue mode is its own group";
}

TEST(PushPop, DeleteQueueRemovesEverything) {
    auto c = client();
    auto q = unique_name("delete");
    push_payloads(c, q, "", {json(1)});
    auto r = c.del("/api/v1/resources/queues/" + q);
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.json()["existed"], true);
    EXPECT_EQ(r.json()["deleted"], true);
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.queues WHERE name = '" + q + "'"), 0);
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.messages WHERE queue = '" + q + "'"), 0);
    EXPECT_EQ(c.del("/api/v1/resources/queues/" + q).json()["existed"], false);
}

TEST(PushPop, ConfigureEchoesEveryOptionWithItsType) {
    auto c = client();
    auto q = unique_name("configure");
    auto r = c.post("/api/v1/configure", json{{"queue", q}, {"namespace", "ns"}, {"task", nullptr},
                                              {"options", {{"leaseTime", 30}, {"retentionEnabled", true}}}});
    ASSERT_EQ(r.status, 200) << r.body;
    auto b = r.json();
    EXPECT_EQ(b["configured"], true);
    EXPECT_EQ(b["queue"], q);
    EXPECT_EQ(b["namespace"], "ns");
    EXPECT_TRUE(b["task"].is_null());
    EXPECT_EQ(b["options"]["leaseTime"], 30);
    EXPECT_EQ(b["options"]["retentionEnabled"], true);
    EXPECT_EQ(b["options"]["retryLimit"], 3);
    EXPECT_EQ(b["options"]["dedupWindowSeconds"], 3600);
    EXPECT_EQ(b["options"].size(), 16u);
    // Configure replaces the whole set: omitted options return to their defaults.
    auto again = c.post("/api/v1/configure", json{{"queue", q}}).json();
    EXPECT_EQ(again["options"]["leaseTime"], 300);
    EXPECT_EQ(again["options"]["retentionEnabled"], false);
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id "
                       "WHERE q.name = '" + q + "' AND p.name = 'Default'"),
              1);
}

TEST(PushPop, Expect100ContinueIsAnsweredBeforeTheBody) {
    namespace asio = boost::asio;
    auto q = unique_name("expect");
    const std::string body = std::string(R"({"items":[{"queue":")") + q + R"(","payload":"after 100"}]})";
    asio::io_context ioc;
    asio::ip::tcp::socket sock(ioc);
    sock.connect({asio::ip::make_address("127.0.0.1"), broker().port()});
    asio::write(sock, asio::buffer("POST /api/v1/push HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                   "Expect: 100-continue\r\nConnection: close\r\nContent-Length: " +
                                   std::to_string(body.size()) + "\r\n\r\n"));
    // The client sends nothing more until the interim answer arrives.
    std::string got;
    char buf[512];
    while (got.find("\r\n\r\n") == std::string::npos) got.append(buf, sock.read_some(asio::buffer(buf)));
    EXPECT_EQ(got.rfind("HTTP/1.1 100 Continue", 0), 0u) << got;
    asio::write(sock, asio::buffer(body));
    boost::system::error_code ec;
    std::string rest;
    for (;;) {
        std::size_t n = sock.read_some(asio::buffer(buf), ec);
        if (ec) break;
        rest.append(buf, n);
    }
    EXPECT_NE(rest.find("201 Created"), std::string::npos) << rest;
    EXPECT_EQ(data_value("SELECT payload::text FROM queen.messages WHERE queue = '" + q + "'"), "\"after 100\"");
}

TEST(PushPop, AnOverflowingNumberIs400AndStoresNothing) {
    auto c = client();
    auto q = unique_name("overflow");
    auto r = c.post("/api/v1/push", std::string(R"({"items":[{"queue":")") + q + R"(","payload":1e999}]})");
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.json()["error"], "a number is out of range: JSON numbers must lie within ±1.7976931348623157e308");
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.queues WHERE name = '" + q + "'"), 0);
}

}  // namespace
}  // namespace queen::test
