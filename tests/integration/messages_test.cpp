// The message browser and tombstones through the real broker (docs/operator-routes.md,
// "Browsing"; docs/delivery-guarantees.md, "Deleted messages"): GET /api/v1/messages (every
// status rule, order, paging after the status filter, filters, the window, 400s), the detail
// (payload decrypted, queue options, groups, dead letter, 404s), DELETE (pops skip tombstones,
// a span of only tombstones advances, commits move over them, a nack of a deleted copy acts as
// completed, the DLQ delete of the dashboard), and /status/queues/:queue/messages.
#include "segment/segment_codec.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace queen::test {
namespace {

using nlohmann::json;

// One push per payload, so createdAt grows item by item; the push answers.
std::vector<json> push_each(http_client& c, const std::string& queue, const std::string& partition, int n,
                            const std::string& prefix) {
    std::vector<json> out;
    for (int i = 1; i <= n; ++i) {
        auto r = c.post("/api/v1/push", json{{"items", json::array({json{{"queue", queue},
                                                                          {"partition", partition},
                                                                          {"transactionId", prefix + std::to_string(i)},
                                                                          {"payload", {{"n", i}}}}})}});
        EXPECT_EQ(r.status, 201) << r.body;
        out.push_back(r.json()[0]);
    }
    return out;
}

// All messages of one push (one segment): its answers.
json push_batch(http_client& c, const std::string& queue, const std::string& partition, int n,
                const std::string& prefix) {
    json items = json::array();
    for (int i = 1; i <= n; ++i)
        items.push_back(json{{"queue", queue}, {"partition", partition}, {"transactionId", prefix + std::to_string(i)},
                             {"payload", {{"n", i}}}});
    auto r = c.post("/api/v1/push", json{{"items", items}});
    EXPECT_EQ(r.status, 201) << r.body;
    return r.json();
}

std::string message_path(const json& pushed) {
    return "/api/v1/messages/" + pushed["partition_id"].get<std::string>() + "/" +
           url_encode(pushed["transaction_id"].get<std::string>());
}

json del(http_client& c, const json& pushed) {
    auto r = c.del(message_path(pushed));
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.json() : json::object();
}

// The offsets a pop answer delivered, in order; empty for 204.
std::vector<std::int64_t> offsets_of(const http_reply& r) {
    std::vector<std::int64_t> out;
    EXPECT_TRUE(r.status == 200 || r.status == 204) << r.status << " " << r.body;
    if (r.status != 200) return out;
    const json body = r.json();
    for (const auto& m : body["messages"]) out.push_back(m["offset"].get<std::int64_t>());
    return out;
}

std::string cursor_of(const std::string& queue, const std::string& partition, const std::string& group) {
    return data_value(
        "SELECT c.committed || '/' || coalesce(c.lease_end::text, '-') || '/' || c.attempts FROM queen.log_consumers c "
        "JOIN queen.log_partitions p ON p.id = c.partition_id JOIN queen.queues q ON q.id = p.queue_id "
        "WHERE q.name = " + quote(queue) + " AND p.name = " + quote(partition) +
        " AND c.consumer_group = " + quote(group));
}

// The (partition, offset, status) of a listing, in answer order.
std::vector<std::string> listed(const json& body) {
    std::vector<std::string> out;
    for (const auto& m : body["messages"])
        out.push_back(m["partition"].get<std::string>() + "#" + std::to_string(m["offset"].get<std::int64_t>()) +
                      ":" + m["status"].get<std::string>());
    return out;
}

using strings = std::vector<std::string>;
using offsets = std::vector<std::int64_t>;

TEST(Messages, EveryStatusRuleShowsInTheListing) {
    auto c = client();
    const auto q = unique_name("brq"), bus = unique_name("brbus"), none = unique_name("brnone");
    configure_queue(c, q, {{"retryLimit", 0}, {"retryDelay", 0}});
    auto qm = push_each(c, q, "qm", 4, "m");
    // 1 deleted; 2 dead-lettered; 3 completed; 4 leased; 5 pushed later: pending.
    EXPECT_EQ(del(c, qm[0])["success"], true);
    auto p = pop(c, q, "batch=1", "qm");
    ASSERT_EQ(offsets_of(p), offsets{2});
    EXPECT_EQ(ack(c, p.json()["messages"][0], "dlq")["success"], true);
    p = pop(c, q, "batch=1", "qm");
    ASSERT_EQ(offsets_of(p), offsets{3});
    EXPECT_EQ(ack(c, p.json()["messages"][0])["success"], true);
    ASSERT_EQ(offsets_of(pop(c, q, "batch=1", "qm")), offsets{4});
    push_each(c, q, "qm", 1, "late");

    auto body = get_ok(c, "/api/v1/messages?queue=" + q);
    EXPECT_EQ(listed(body), (strings{"qm#5:pending", "qm#4:processing", "qm#3:completed", "qm#2:dead_letter",
                                     "qm#1:deleted"}));
    EXPECT_EQ(body["mode"], (json{{"hasQueueMode", true}, {"busGroupsCount", 0}, {"type", "queue"}}));
    const auto& leased = body["messages"][1];
    EXPECT_TRUE(leased["leaseExpiresAt"].is_string()) << leased.dump();
    EXPECT_EQ(leased["queueStatus"], "processing");
    EXPECT_TRUE(body["messages"][0]["leaseExpiresAt"].is_null());
    EXPECT_EQ(leased["queuePath"], q + "/qm");
    EXPECT_EQ(leased["transactionId"], "m4");
    EXPECT_EQ(leased["id"], qm[3]["message_id"]);
    EXPECT_EQ(leased["partitionId"], qm[3]["partition_id"]);
    EXPECT_TRUE(leased["busStatus"]["consumedBy"].is_number_integer());
    // The status filter, before paging.
    EXPECT_EQ(listed(get_ok(c, "/api/v1/messages?queue=" + q + "&status=dead_letter")), strings{"qm#2:dead_letter"});
    EXPECT_EQ(listed(get_ok(c, "/api/v1/messages?queue=" + q + "&status=pending&limit=1")), strings{"qm#5:pending"});

    // Named groups only: completed once every group committed it.
    auto b = push_batch(c, bus, "Default", 2, "b");
    p = pop(c, bus, "batch=2&consumerGroup=ga");
    ASSERT_EQ(offsets_of(p), (offsets{1, 2}));
    EXPECT_EQ(ack(c, p.json()["messages"][1], "completed", "ga")["success"], true);
    p = pop(c, bus, "batch=1&consumerGroup=gb");
    ASSERT_EQ(offsets_of(p), offsets{1});
    EXPECT_EQ(ack(c, p.json()["messages"][0], "completed", "gb")["success"], true);
    body = get_ok(c, "/api/v1/messages?queue=" + bus);
    EXPECT_EQ(listed(body), (strings{"Default#2:pending", "Default#1:completed"}));
    EXPECT_EQ(body["messages"][0]["busStatus"], (json{{"consumedBy", 1}, {"totalGroups", 2}}));
    EXPECT_EQ(body["messages"][1]["busStatus"], (json{{"consumedBy", 2}, {"totalGroups", 2}}));
    EXPECT_EQ(body["messages"][0]["queueStatus"], "pending");
    EXPECT_EQ(body["mode"], (json{{"hasQueueMode", false}, {"busGroupsCount", 2}, {"type", "bus"}}));
    // One group alone (client-go sends consumerGroup).
    EXPECT_EQ(listed(get_ok(c, "/api/v1/messages?queue=" + bus + "&consumerGroup=ga")),
              (strings{"Default#2:completed", "Default#1:completed"}));
    EXPECT_EQ(listed(get_ok(c, "/api/v1/messages?queue=" + bus + "&consumerGroup=gb&status=pending")),
              strings{"Default#2:pending"});

    // No cursor at all: pending, mode none.
    push_each(c, none, "Default", 1, "n");
    body = get_ok(c, "/api/v1/messages?queue=" + none);
    EXPECT_EQ(listed(body), strings{"Default#1:pending"});
    EXPECT_EQ(body["mode"]["type"], "none");
}

TEST(Messages, NewestFirstWithPagingFiltersAndTheWindow) {
    auto c = client();
    const auto q = unique_name("brpage"), other = unique_name("brother");
    const auto ns = unique_name("ns"), task = unique_name("task");
    configure_queue(c, q, json::object(), ns, task);
    configure_queue(c, other, json::object(), ns, "");
    for (int i = 1; i <= 3; ++i) {
        push_each(c, q, "p1", 1, "a" + std::to_string(i) + "-");
        push_each(c, q, "p2", 1, "b" + std::to_string(i) + "-");
    }
    push_each(c, other, "Default", 1, "o");

    const strings all{"p2#3:pending", "p1#3:pending", "p2#2:pending", "p1#2:pending", "p2#1:pending", "p1#1:pending"};
    EXPECT_EQ(listed(get_ok(c, "/api/v1/messages?queue=" + q)), all);
    EXPECT_EQ(listed(get_ok(c, "/api/v1/messages?queue=" + q + "&limit=2&offset=1")), (strings{all[1], all[2]}));
    EXPECT_EQ(listed(get_ok(c, "/api/v1/messages?queue=" + q + "&limit=0")), strings{});
    EXPECT_EQ(listed(get_ok(c, "/api/v1/messages?queue=" + q + "&offset=6")), strings{});
    EXPECT_EQ(listed(get_ok(c, "/api/v1/messages?queue=" + q + "&partition=p1")),
              (strings{"p1#3:pending", "p1#2:pending", "p1#1:pending"}));
    EXPECT_EQ(get_ok(c, "/api/v1/messages?ns=" + ns)["messages"].size(), 7u);
    EXPECT_EQ(get_ok(c, "/api/v1/messages?namespace=" + ns)["messages"].size(), 7u);
    auto by_task = get_ok(c, "/api/v1/messages?task=" + task);
    EXPECT_EQ(by_task["messages"].size(), 6u);
    EXPECT_EQ(by_task["messages"][0]["namespace"], ns);
    EXPECT_EQ(by_task["messages"][0]["task"], task);
    EXPECT_EQ(get_ok(c, "/api/v1/messages?queue=" + q + "&partition=nope")["messages"].size(), 0u);

    // An unknown queue is an empty answer, not a 404.
    auto empty = get_ok(c, "/api/v1/messages?queue=" + unique_name("nosuch"));
    EXPECT_EQ(empty, (json{{"messages", json::array()},
                           {"mode", {{"hasQueueMode", false}, {"busGroupsCount", 0}, {"type", "none"}}}}));

    // The window: a past hour holds nothing; `to` covers the whole of its minute.
    EXPECT_EQ(get_ok(c, "/api/v1/messages?queue=" + q + "&from=2020-01-01T00:00:00Z&to=2020-01-01T01:00:00Z")
                  ["messages"].size(), 0u);
    EXPECT_EQ(get_ok(c, "/api/v1/messages?queue=" + q + "&from=2099-01-01T00:00:00Z&to=2099-01-01T01:00:00Z")
                  ["messages"].size(), 0u);
    const auto created = get_ok(c, "/api/v1/messages?queue=" + q)["messages"][0]["createdAt"].get<std::string>();
    const auto minute = created.substr(0, 16) + ":00Z";  // the start of its minute
    EXPECT_EQ(get_ok(c, "/api/v1/messages?queue=" + q + "&from=2020-01-01T00:00:00Z&to=" + minute)["messages"].size(),
              6u);
}

TEST(Messages, BadValuesAre400NamingTheParameter) {
    auto c = client();
    const std::vector<std::pair<std::string, std::string>> bad{
        {"limit=abc", "limit"},  {"limit=-1", "limit"},   {"limit=10001", "limit"},
        {"offset=-1", "offset"}, {"offset=x", "offset"},  {"from=yesterday", "from"},
        {"to=soon", "to"},       {"status=done", "status"},
        {"from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "from"}};
    for (const auto& [query, name] : bad) {
        auto r = c.get("/api/v1/messages?" + query);
        EXPECT_EQ(r.status, 400) << query << ": " << r.body;
        EXPECT_NE(r.json()["error"].get<std::string>().find(name), std::string::npos) << query << ": " << r.body;
    }
    EXPECT_EQ(c.get("/api/v1/messages?limit=10000&queue=" + unique_name("x")).status, 200);
    EXPECT_EQ(c.get("/api/v1/status/queues/x/messages?limit=-2").status, 400);
}

TEST(Messages, DetailHasTheDecryptedPayloadOptionsGroupsAndDeadLetter) {
    const std::string key(64, '5');
    broker_process b(cluster().conninfo(), {{"QUEEN_ENCRYPTION_KEY", key}});
    auto c = client_of(b);
    const auto q = unique_name("brsecret");
    configure_queue(c, q, {{"encryptionEnabled", true}, {"retryLimit", 0}, {"leaseTime", 120}, {"retryDelay", 250},
                     {"ttl", 900}, {"priority", 4}});
    const json payload{{"secret", "s3cr3t"}, {"list", {1, 2, 3}}};
    auto r = c.post("/api/v1/push", json{{"items", json::array({json{{"queue", q}, {"transactionId", "tx-1"},
                                                                      {"payload", payload}},
                                                                 json{{"queue", q}, {"transactionId", "tx-2"},
                                                                      {"payload", "two"}}})}});
    ASSERT_EQ(r.status, 201) << r.body;
    const auto pushed = r.json();
    auto popped = pop(c, q, "batch=1&consumerGroup=audit");
    ASSERT_EQ(offsets_of(popped), offsets{1});
    const json first = popped.json()["messages"][0];
    auto nack = c.post("/api/v1/ack", json{{"transactionId", first["transactionId"]}, {"partitionId", first["partitionId"]},
                                           {"leaseId", first["leaseId"]}, {"status", "failed"},
                                           {"consumerGroup", "audit"}, {"error", "boom"}});
    ASSERT_EQ(nack.json()["dlq"], true) << nack.body;

    auto d = get_ok(c, message_path(pushed[0]));
    EXPECT_EQ(d["payload"], payload);
    EXPECT_EQ(d["isEncrypted"], true);
    EXPECT_EQ(d["transactionId"], "tx-1");
    EXPECT_EQ(d["offset"], 1);
    EXPECT_EQ(d["queue"], q);
    EXPECT_EQ(d["partition"], "Default");
    EXPECT_EQ(d["status"], "dead_letter");
    EXPECT_EQ(d["errorMessage"], "boom");
    EXPECT_EQ(d["retryCount"], 1);
    EXPECT_EQ(d["queueConfig"], (json{{"leaseTime", 120}, {"retryLimit", 0}, {"retryDelay", 250}, {"ttl", 900},
                                      {"priority", 4}}));
    EXPECT_EQ(d["consumerGroups"], (json::array({json{{"name", "audit"}, {"consumed", true}, {"leaseExpiresAt", nullptr}}})));
    EXPECT_EQ(d["mode"], (json{{"hasQueueMode", false}, {"busGroupsCount", 1}, {"consumedByGroups", 1}, {"type", "bus"}}));
    EXPECT_FALSE(d.contains("deletedAt"));

    auto two = get_ok(c, message_path(pushed[1]));
    EXPECT_EQ(two["payload"], "two");
    EXPECT_EQ(two["status"], "pending");
    EXPECT_EQ(two["errorMessage"], nullptr);
    EXPECT_EQ(two["retryCount"], nullptr);

    // 404s: unknown transaction id, unknown partition, a partitionId that is not one.
    const std::string pid = pushed[0]["partition_id"];
    for (const std::string& target : {"/api/v1/messages/" + pid + "/nope", std::string("/api/v1/messages/999999999/tx-1"),
                                     std::string("/api/v1/messages/not-a-uuid/tx-1")}) {
        auto nf = c.get(target);
        EXPECT_EQ(nf.status, 404) << target;
        EXPECT_EQ(nf.body, R"({"error":"Message not found"})") << target;
        auto nd = c.del(target);
        EXPECT_EQ(nd.status, 404) << target;
        EXPECT_EQ(nd.body, R"({"error":"Message not found"})") << target;
    }
}

TEST(Messages, PopsSkipTombstonesAndOffsetsStayPut) {
    auto c = client();
    const auto q = unique_name("brtomb");
    auto m = push_batch(c, q, "Default", 6, "t");
    for (int i : {0, 1, 3, 5}) {
        auto d = del(c, m[i]);
        EXPECT_EQ(d["success"], true);
        EXPECT_EQ(d["offset"], i + 1);
        EXPECT_EQ(d["message"], "Message deleted successfully");
        EXPECT_FALSE(d.contains("alreadyDeleted"));
    }
    auto again = del(c, m[1]);
    EXPECT_EQ(again["alreadyDeleted"], true);
    EXPECT_EQ(again["message"], "Message already deleted");
    EXPECT_EQ(again["partitionId"], m[1]["partition_id"]);
    EXPECT_EQ(again["transactionId"], "t2");

    // Queue mode: the leading tombstones are passed, 4 and 6 are not handed out.
    auto p = pop(c, q, "batch=10");
    ASSERT_EQ(offsets_of(p), (offsets{3, 5}));
    EXPECT_EQ(p.json()["messages"][0]["transactionId"], "t3");
    EXPECT_EQ(p.json()["messages"][1]["id"], m[4]["message_id"]);
    // Acknowledging 5 reaches the span end over the tombstone 6: the lease ends.
    auto a = c.post("/api/v1/ack/batch", json{{"acknowledgments", json::array({
                                                   json{{"transactionId", "t3"}, {"partitionId", m[2]["partition_id"]},
                                                        {"leaseId", p.json()["leaseId"]}},
                                                   json{{"transactionId", "t5"}, {"partitionId", m[4]["partition_id"]},
                                                        {"leaseId", p.json()["leaseId"]}}})}});
    ASSERT_EQ(a.status, 200) << a.body;
    EXPECT_EQ(a.json()[1]["leaseReleased"], true) << a.body;
    EXPECT_EQ(cursor_of(q, "Default", "__QUEUE_MODE__"), "6/-/0");
    EXPECT_EQ(pop(c, q, "batch=10").status, 204);
    // Another group sees the same messages at the same offsets.
    EXPECT_EQ(offsets_of(pop(c, q, "batch=10&consumerGroup=late")), (offsets{3, 5}));

    // Listings show them deleted; counts are unchanged.
    EXPECT_EQ(listed(get_ok(c, "/api/v1/messages?queue=" + q + "&consumerGroup=late")),
              (strings{"Default#6:deleted", "Default#5:processing", "Default#4:deleted", "Default#3:processing",
                       "Default#2:deleted", "Default#1:deleted"}));
    auto detail = get_ok(c, "/api/v1/resources/queues/" + q);
    EXPECT_EQ(detail["totals"]["total"], 6);
    auto gone = get_ok(c, message_path(m[3]));
    EXPECT_EQ(gone["status"], "deleted");
    EXPECT_EQ(gone["payload"], nullptr);
    EXPECT_TRUE(gone["deletedAt"].is_string()) << gone.dump();
    EXPECT_EQ(gone["transactionId"], "t4");
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.message_tombstones WHERE partition_id = " +
                       m[0]["partition_id"].get<std::string>() + " AND deleted_by IS NULL"),
              4);
}

TEST(Messages, ASpanOfOnlyTombstonesAdvancesTheCursor) {
    auto c = client();
    const auto q = unique_name("bronly");
    // A live message after two tombstones is handed out, not a 204.
    auto lead = push_batch(c, q, "lead", 3, "l");
    del(c, lead[0]);
    del(c, lead[1]);
    EXPECT_EQ(offsets_of(pop(c, q, "batch=2", "lead")), offsets{3});
    // A backlog of tombstones only: 204, and the cursor has moved past them.
    auto tail = push_batch(c, q, "tail", 2, "x");
    del(c, tail[0]);
    del(c, tail[1]);
    EXPECT_EQ(pop(c, q, "batch=5", "tail").status, 204);
    EXPECT_EQ(cursor_of(q, "tail", "__QUEUE_MODE__"), "2/-/0");
    // Queue-wide: a partition whose backlog is only tombstones does not hide the next one.
    const auto wide = unique_name("brwide");
    auto first = push_batch(c, wide, "a-first", 2, "f");
    push_batch(c, wide, "b-second", 1, "s");
    del(c, first[0]);
    del(c, first[1]);
    auto p = pop(c, wide, "batch=1");
    ASSERT_EQ(p.status, 200);
    EXPECT_EQ(p.json()["partition"], "b-second");
    EXPECT_EQ(cursor_of(wide, "a-first", "__QUEUE_MODE__"), "2/-/0");
}

TEST(Messages, ANackOfADeletedCopyActsAsCompleted) {
    auto c = client();
    const auto q = unique_name("brnack");
    configure_queue(c, q, {{"retryLimit", 0}, {"retryDelay", 0}});
    auto m = push_batch(c, q, "Default", 2, "k");
    auto p = pop(c, q, "batch=1");
    ASSERT_EQ(offsets_of(p), offsets{1});
    del(c, m[0]);
    auto a = ack(c, p.json()["messages"][0], "failed");
    EXPECT_EQ(a["success"], true) << a.dump();
    EXPECT_FALSE(a.contains("dlq")) << a.dump();
    EXPECT_EQ(cursor_of(q, "Default", "__QUEUE_MODE__"), "1/-/0");
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.dead_letters WHERE partition_id = " +
                       m[0]["partition_id"].get<std::string>()),
              0);
    EXPECT_EQ(offsets_of(pop(c, q, "batch=5")), offsets{2});
}

TEST(Messages, TheDashboardsDlqDeleteRemovesTheDeadLetter) {
    auto c = client();
    const auto q = unique_name("brdlq");
    configure_queue(c, q, {{"retryLimit", 0}, {"retryDelay", 0}});
    auto m = push_batch(c, q, "Default", 2, "d");
    auto p = pop(c, q, "batch=1");
    ASSERT_EQ(ack(c, p.json()["messages"][0], "failed")["dlq"], true);
    p = pop(c, q, "batch=1&consumerGroup=other");
    ASSERT_EQ(ack(c, p.json()["messages"][0], "dlq", "other")["dlq"], true);
    auto dlq = get_ok(c, "/api/v1/dlq?queue=" + q);
    ASSERT_EQ(dlq["total"], 2);
    // DeadLetter.vue deletes with the dead letter's partitionId and transactionId.
    const auto& letter = dlq["messages"][0];
    auto r = c.del("/api/v1/messages/" + letter["partitionId"].get<std::string>() + "/" +
                   url_encode(letter["transactionId"].get<std::string>()));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["success"], true);
    dlq = get_ok(c, "/api/v1/dlq?queue=" + q);
    EXPECT_EQ(dlq["total"], 0) << dlq.dump();
    EXPECT_EQ(dlq["messages"].size(), 0u);
    EXPECT_EQ(listed(get_ok(c, "/api/v1/messages?queue=" + q)), (strings{"Default#2:pending", "Default#1:deleted"}));
    EXPECT_EQ(offsets_of(pop(c, q, "batch=5")), offsets{2});
}

TEST(Messages, QueueMessagesListQueueStatusNewestFirst) {
    auto c = client();
    const auto q = unique_name("brstat");
    push_each(c, q, "Default", 3, "s");
    auto p = pop(c, q, "batch=1");
    ASSERT_EQ(ack(c, p.json()["messages"][0])["success"], true);
    ASSERT_EQ(offsets_of(pop(c, q, "batch=1")), offsets{2});
    auto list = get_ok(c, "/api/v1/status/queues/" + q + "/messages");
    ASSERT_TRUE(list.is_array());
    std::vector<std::string> got;
    for (const auto& m : list) got.push_back(m["transactionId"].get<std::string>() + ":" + m["status"].get<std::string>());
    EXPECT_EQ(got, (strings{"s3:pending", "s2:processing", "s1:completed"}));
    EXPECT_EQ(list[0]["queuePath"], q + "/Default");
    EXPECT_EQ(get_ok(c, "/api/v1/status/queues/" + q + "/messages?limit=1&offset=2")[0]["transactionId"], "s1");
    EXPECT_EQ(get_ok(c, "/api/v1/status/queues/" + unique_name("nosuch") + "/messages"), json::array());
}

std::string hex(std::string_view bytes) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned char ch : bytes) {
        out += digits[ch >> 4];
        out += digits[ch & 15];
    }
    return out;
}

// A zstd segment in a database without queen_ext: plain SQL cannot decode it, the broker does.
TEST(Messages, ZstdSegmentsAreDecodedByTheBroker) {
    auto c = client();
    const auto q = unique_name("brzstd");
    auto raw = push_batch(c, q, "Default", 1, "raw");
    const std::string pid = raw[0]["partition_id"];
    const std::string p2 = "{\"z\":2}", p3 = "[\"z\",3]", producer = "svc";
    const std::array<std::uint8_t, 16> trace{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x4d, 0xef,
                                             0x80, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77};
    const std::int64_t now_us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    std::vector<segment::frame_view> frames(2);
    frames[0].created_at_us = now_us;
    frames[0].transaction_id = "z-two";
    frames[0].payload = p2;
    frames[1].created_at_us = now_us;
    frames[1].transaction_id = "z-three";
    frames[1].trace_id = trace;
    frames[1].producer_sub = std::string_view(producer);
    frames[1].payload = p3;
    const std::string body = segment::encode(frames, segment::codec::zstd);
    // Written where the partition is (every shard is asked; one holds it).
    const std::string where_held = " WHERE EXISTS (SELECT 1 FROM queen.log_partitions WHERE id = " + pid + ")";
    data_run("INSERT INTO queen.log_segments (partition_id, first_offset, last_offset, codec, created_at, body) "
             "SELECT " + pid + ", 2, 3, 1, now(), '\\x" + hex(body) + "'::bytea" + where_held);
    // The dedup rows a push with queen_ext would have written: the detail finds them through these.
    data_run("INSERT INTO queen.log_dedup (partition_id, transaction_id, msg_offset, created_at) SELECT " + pid +
             ", d.txid, d.off, now() FROM (VALUES ('z-two', 2), ('z-three', 3)) AS d(txid, off)" + where_held);

    auto list = get_ok(c, "/api/v1/messages?queue=" + q);
    ASSERT_EQ(list["messages"].size(), 3u) << list.dump();
    EXPECT_EQ(list["messages"][0]["transactionId"], "z-three");
    EXPECT_EQ(list["messages"][0]["traceId"], segment::uuid_to_string(trace));
    EXPECT_EQ(list["messages"][0]["producerSub"], "svc");
    EXPECT_EQ(list["messages"][1]["transactionId"], "z-two");
    EXPECT_EQ(list["messages"][2]["transactionId"], "raw1");
    // Paging inside the segment: its second message alone.
    auto second = get_ok(c, "/api/v1/messages?queue=" + q + "&limit=1&offset=1");
    ASSERT_EQ(second["messages"].size(), 1u);
    EXPECT_EQ(second["messages"][0]["transactionId"], "z-two");

    auto d = get_ok(c, "/api/v1/messages/" + pid + "/z-three");
    EXPECT_EQ(d["payload"], json::parse(p3));
    EXPECT_EQ(d["transactionId"], "z-three");
    EXPECT_EQ(d["offset"], 3);
    EXPECT_EQ(d["producerSub"], "svc");
    EXPECT_EQ(d["isEncrypted"], false);
    EXPECT_EQ(del(c, json{{"partition_id", pid}, {"transaction_id", "z-two"}})["offset"], 2);
    EXPECT_EQ(get_ok(c, "/api/v1/messages/" + pid + "/z-two")["status"], "deleted");
}

}  // namespace
}  // namespace queen::test
