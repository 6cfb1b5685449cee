// Dead letters through the real broker (docs/dead-letters.md): GET /api/v1/dlq (fields,
// newest failure first, filters, paging, total, 400s), POST /api/v1/dlq/requeue (new
// message with the original transaction id, popped again, dedup pointing at the new offset,
// one message for several groups, order of failure, empty filter refused, zstd copies
// decoded by the broker) and DELETE /api/v1/dlq (purge by filter, empty filter refused).
#include "segment/segment_codec.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;

std::string q_arg(const std::string& v) { return url_encode(v); }

class Dlq : public ::testing::Test {
protected:
    // A queue whose first failure dead-letters (retryLimit 0), with `payloads` pushed to
    // `partition` (default partition when empty).
    void make_queue(const std::vector<json>& payloads, const std::string& partition = "") {
        queue = unique_name("dlq");
        auto r = c.post("/api/v1/configure", json{{"queue", queue}, {"options", {{"retryLimit", 0}, {"retryDelay", 0}}}});
        ASSERT_EQ(r.status, 200) << r.body;
        if (!payloads.empty()) push_payloads(c, queue, partition, payloads);
    }

    // Pops up to `batch` messages for `group` ("" = queue mode).
    json pop_messages(int batch, const std::string& group = "", const std::string& partition = "") {
        std::string query = "batch=" + std::to_string(batch);
        if (!group.empty()) query += "&consumerGroup=" + q_arg(group);
        auto r = pop(c, queue, query, partition);
        EXPECT_EQ(r.status, 200) << r.body;
        if (r.status != 200) return json::array();
        return r.json()["messages"];
    }

    // One ack with status and error text.
    json ack_with(const json& m, const std::string& status, const std::string& error, const std::string& group = "") {
        json body{{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]}, {"leaseId", m["leaseId"]},
                  {"status", status},                    {"error", error},
                  {"consumerGroup", group.empty() ? json() : json(group)}};
        auto r = c.post("/api/v1/ack", body);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.json();
    }

    json list(const std::string& query) {
        auto r = c.get("/api/v1/dlq?" + query);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.status == 200 ? r.json() : json::object();
    }

    std::vector<std::int64_t> offsets_of(const json& listing) {
        std::vector<std::int64_t> out;
        for (const auto& m : listing["messages"]) out.push_back(m["offset"].get<std::int64_t>());
        return out;
    }

    std::string dead_letter_rows() {
        return std::to_string(data_sum(
            "SELECT count(*) FROM queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id WHERE q.name = '" +
            queue + "'"));
    }

    http_client c = client();
    std::string queue;
};

TEST_F(Dlq, ListingShowsPayloadErrorAttemptsGroupOffsetAndTimes) {
    make_queue({json{{"order", 1}, {"items", json::array({"a", "b"})}}, json("second")});
    auto msgs = pop_messages(1, "billing");
    ASSERT_EQ(msgs.size(), 1u);
    auto res = ack_with(msgs[0], "failed", "card declined", "billing");
    EXPECT_EQ(res["dlq"], true) << res.dump();

    auto body = list("queue=" + q_arg(queue));
    ASSERT_EQ(body["messages"].size(), 1u) << body.dump();
    const auto& d = body["messages"][0];
    EXPECT_EQ(d["id"], msgs[0]["id"]) << "the id is the message id, the same as on delivery";
    EXPECT_EQ(d["transactionId"], msgs[0]["transactionId"]);
    EXPECT_EQ(d["partitionId"], msgs[0]["partitionId"]);
    EXPECT_EQ(d["queue"], queue);
    EXPECT_EQ(d["partition"], "Default");
    EXPECT_EQ(d["consumerGroup"], "billing");
    EXPECT_EQ(d["offset"], 1);
    EXPECT_EQ(d["errorMessage"], "card declined");
    EXPECT_EQ(d["retryCount"], 1);
    EXPECT_EQ(d["data"], (json{{"order", 1}, {"items", json::array({"a", "b"})}}));
    EXPECT_EQ(d["createdAt"], msgs[0]["createdAt"]);
    ASSERT_TRUE(d["failedAt"].is_string());
    EXPECT_EQ(d["failedAt"].get<std::string>().size(), 27u) << d["failedAt"];
    EXPECT_GE(d["failedAt"].get<std::string>(), d["createdAt"].get<std::string>());
    EXPECT_EQ(body["total"], 1);
    EXPECT_EQ(body["pagination"], (json{{"limit", 100}, {"offset", 0}}));
}

TEST_F(Dlq, DataIsThePayloadVerbatim) {
    make_queue({json(nullptr), json(3.25), json("x\"y\\z\n")});
    auto msgs = pop_messages(3);
    ASSERT_EQ(msgs.size(), 3u);
    json acks = json::array();
    for (const auto& m : msgs)
        acks.push_back({{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]}, {"status", "dlq"}});
    ASSERT_EQ(c.post("/api/v1/ack/batch", json{{"acknowledgments", acks}}).status, 200);
    auto r = c.get("/api/v1/dlq?queue=" + q_arg(queue));
    ASSERT_EQ(r.status, 200);
    EXPECT_NE(r.body.find("\"data\":null"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find("\"data\":3.25"), std::string::npos) << r.body;
    auto body = r.json();
    ASSERT_EQ(body["total"], 3);
    EXPECT_EQ(body["messages"][0]["data"], "x\"y\\z\n");
}

TEST_F(Dlq, NewestFailureFirstWithPagingAndTotal) {
    make_queue({json(1), json(2), json(3), json(4)});
    auto msgs = pop_messages(4);
    ASSERT_EQ(msgs.size(), 4u);
    // Four separate calls: failures at 1, 2, 3, 4 in that order (dlq keeps the lease).
    for (const auto& m : msgs) ack_with(m, "dlq", "e" + m["offset"].dump());
    auto all = list("queue=" + q_arg(queue));
    EXPECT_EQ(offsets_of(all), (std::vector<std::int64_t>{4, 3, 2, 1}));
    EXPECT_EQ(all["total"], 4);
    auto page = list("queue=" + q_arg(queue) + "&limit=2&offset=1");
    EXPECT_EQ(offsets_of(page), (std::vector<std::int64_t>{3, 2}));
    EXPECT_EQ(page["total"], 4);
    EXPECT_EQ(page["pagination"], (json{{"limit", 2}, {"offset", 1}}));
    auto beyond = list("queue=" + q_arg(queue) + "&limit=10&offset=10");
    EXPECT_TRUE(beyond["messages"].empty());
    EXPECT_EQ(beyond["total"], 4);
}

TEST_F(Dlq, FiltersCombine) {
    make_queue({json("a1"), json("a2")}, "pa");
    push_payloads(c, queue, "pb", {json("b1")});
    // g1 dead-letters pa:1 and pb:1; g2 dead-letters pa:1.
    auto g1a = pop_messages(1, "g1", "pa");
    auto g1b = pop_messages(1, "g1", "pb");
    auto g2a = pop_messages(1, "g2", "pa");
    ack_with(g1a[0], "dlq", "x", "g1");
    ack_with(g1b[0], "dlq", "x", "g1");
    ack_with(g2a[0], "dlq", "x", "g2");
    const std::string qf = "queue=" + q_arg(queue);
    EXPECT_EQ(list(qf)["total"], 3);
    EXPECT_EQ(list(qf + "&consumerGroup=g1")["total"], 2);
    EXPECT_EQ(list(qf + "&partition=pa")["total"], 2);
    auto one = list(qf + "&consumerGroup=g1&partition=pb");
    ASSERT_EQ(one["total"], 1);
    EXPECT_EQ(one["messages"][0]["data"], "b1");
    EXPECT_EQ(list(qf + "&consumerGroup=g2&partition=pb")["total"], 0);
    EXPECT_EQ(list(qf + "&id=" + g1a[0]["id"].get<std::string>())["total"], 2) << "both groups' dead letters of it";
    // Time range on failedAt.
    EXPECT_EQ(list(qf + "&from=2999-01-01T00:00:00Z")["total"], 0);
    EXPECT_EQ(list(qf + "&to=2000-01-01T00:00:00Z")["total"], 0);
    EXPECT_EQ(list(qf + "&from=2000-01-01T00:00:00Z&to=2999-01-01T00:00:00.000000Z")["total"], 3);
    auto newest = list(qf)["messages"][0]["failedAt"].get<std::string>();
    EXPECT_EQ(list(qf + "&from=" + q_arg(newest))["total"], 1) << "from is inclusive";
    EXPECT_EQ(list(qf + "&to=" + q_arg(newest))["total"], 3) << "to is inclusive";
    // A partition name alone matches it in every queue; together with the queue, only there.
    EXPECT_GE(list("partition=pa")["total"].get<int>(), 2);
}

TEST_F(Dlq, UnknownQueueIsAnEmptyList) {
    auto body = list("queue=" + q_arg(unique_name("nothing-here")));
    EXPECT_TRUE(body["messages"].is_array());
    EXPECT_TRUE(body["messages"].empty());
    EXPECT_EQ(body["total"], 0);
}

TEST_F(Dlq, BadParametersAre400) {
    for (const std::string q : {"limit=0", "limit=1001", "limit=abc", "limit=-5", "offset=-1", "offset=x",
                                "from=yesterday", "to=2024-13-45", "from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z",
                                "id=not-an-id"}) {
        auto r = c.get("/api/v1/dlq?" + q);
        EXPECT_EQ(r.status, 400) << q << " -> " << r.body;
        if (r.status == 400) {
            EXPECT_TRUE(r.json()["error"].is_string());
        }
    }
    EXPECT_EQ(c.get("/api/v1/dlq?limit=1000&queue=" + q_arg(unique_name("x"))).status, 200);
    EXPECT_EQ(c.get("/api/v1/dlq?limit=1&queue=" + q_arg(unique_name("x"))).status, 200);
}

TEST_F(Dlq, RequeuedMessageIsPoppedAgainWithItsTransactionIdAndPayload) {
    make_queue({json{{"n", 1}}, json{{"n", 2}}});
    auto msgs = pop_messages(2);
    ASSERT_EQ(msgs.size(), 2u);
    ack_with(msgs[0], "dlq", "bad");   // offset 1 dead-lettered; lease kept for 2
    ack_with(msgs[1], "completed", "");
    ASSERT_EQ(dead_letter_rows(), "1");

    auto r = c.post("/api/v1/dlq/requeue?queue=" + q_arg(queue), std::string());
    ASSERT_EQ(r.status, 200) << r.body;
    auto body = r.json();
    EXPECT_EQ(body["success"], true);
    EXPECT_EQ(body["requeued"], 1);
    EXPECT_EQ(body["removed"], 1);
    EXPECT_EQ(body["skipped"], 0);
    EXPECT_EQ(body["remaining"], 0);
    ASSERT_EQ(body["messages"].size(), 1u);
    const auto& nm = body["messages"][0];
    EXPECT_EQ(nm["previousId"], msgs[0]["id"]);
    EXPECT_NE(nm["id"], msgs[0]["id"]) << "a new message, with a new id";
    EXPECT_EQ(nm["offset"], 3);
    EXPECT_EQ(nm["transactionId"], msgs[0]["transactionId"]);
    EXPECT_EQ(nm["queue"], queue);
    EXPECT_EQ(nm["partition"], "Default");
    EXPECT_EQ(nm["partitionId"], msgs[0]["partitionId"]);

    EXPECT_EQ(dead_letter_rows(), "0") << "the dead-letter table no longer holds it";
    EXPECT_EQ(list("queue=" + q_arg(queue))["total"], 0);

    auto again = pop_messages(5);
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0]["transactionId"], msgs[0]["transactionId"]);
    EXPECT_EQ(again[0]["data"], (json{{"n", 1}}));
    EXPECT_EQ(again[0]["id"], nm["id"]);
    EXPECT_EQ(again[0]["offset"], 3);
    // Acks by transactionId resolve to the new offset (the dedup entry points at it).
    auto a = ack(c, again[0]);
    EXPECT_EQ(a["success"], true) << a.dump();
    EXPECT_EQ(a["offset"], 3);
    EXPECT_EQ(pop(c, queue, "batch=5").status, 204);
}

TEST_F(Dlq, DedupAfterRequeueAnswersWithTheNewMessage) {
    make_queue({});
    auto pushed = c.post("/api/v1/push", json{{"items", json::array({{{"queue", queue}, {"transactionId", "order-9"},
                                                                      {"payload", "v1"}}})}});
    ASSERT_EQ(pushed.status, 201);
    auto msgs = pop_messages(1);
    ack_with(msgs[0], "failed", "boom");  // retryLimit 0: dead-lettered
    auto r = c.post("/api/v1/dlq/requeue", json{{"queue", queue}});
    ASSERT_EQ(r.status, 200) << r.body;
    const auto new_id = r.json()["messages"][0]["id"];
    // The original transaction id is still inside the dedup window: a push of it is a
    // duplicate — of the requeued message now.
    auto dup = c.post("/api/v1/push", json{{"items", json::array({{{"queue", queue}, {"transactionId", "order-9"},
                                                                   {"payload", "v2"}}})}});
    ASSERT_EQ(dup.status, 201);
    EXPECT_EQ(dup.json()[0]["status"], "duplicate");
    EXPECT_EQ(dup.json()[0]["message_id"], new_id);
}

TEST_F(Dlq, OneMessageDeadLetteredByTwoGroupsIsRequeuedOnceInOrderOfFailure) {
    make_queue({json("first"), json("second")});
    auto g1 = pop_messages(2, "g1");
    auto g2 = pop_messages(2, "g2");
    ASSERT_EQ(g1.size(), 2u);
    ASSERT_EQ(g2.size(), 2u);
    // Failures in this order: offset 2 (g1), offset 1 (g2), offset 2 (g2).
    json acks = json::array({{{"transactionId", g1[0]["transactionId"]}, {"partitionId", g1[0]["partitionId"]},
                              {"status", "completed"}},
                             {{"transactionId", g1[1]["transactionId"]}, {"partitionId", g1[1]["partitionId"]},
                              {"status", "dlq"}}});
    ASSERT_EQ(c.post("/api/v1/ack/batch", json{{"consumerGroup", "g1"}, {"acknowledgments", acks}}).status, 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ack_with(g2[0], "dlq", "x", "g2");
    ack_with(g2[1], "dlq", "x", "g2");
    EXPECT_EQ(list("queue=" + q_arg(queue))["total"], 3);

    auto r = c.post("/api/v1/dlq/requeue", json{{"queue", queue}, {"all", true}});
    ASSERT_EQ(r.status, 200) << r.body;
    auto body = r.json();
    EXPECT_EQ(body["requeued"], 2);
    EXPECT_EQ(body["removed"], 3);
    ASSERT_EQ(body["messages"].size(), 2u);
    EXPECT_EQ(body["messages"][0]["transactionId"], g1[1]["transactionId"]) << "offset 2 failed first";
    EXPECT_EQ(body["messages"][0]["offset"], 3);
    EXPECT_EQ(body["messages"][1]["transactionId"], g1[0]["transactionId"]);
    EXPECT_EQ(body["messages"][1]["offset"], 4);
    EXPECT_EQ(dead_letter_rows(), "0");
    // Every group of the queue sees the requeued messages (a requeue is a new push).
    auto again = pop_messages(5, "g1");
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(again[0]["data"], "second");
    EXPECT_EQ(again[1]["data"], "first");
}

TEST_F(Dlq, RequeueFilterValidation) {
    make_queue({json(1)});
    auto msgs = pop_messages(1, "g");
    ack_with(msgs[0], "dlq", "x", "g");
    // No filter: refused, explicitly.
    for (const std::string& body : {std::string(), std::string("{}"), std::string("{\"all\":false}")}) {
        auto r = c.post("/api/v1/dlq/requeue", body);
        EXPECT_EQ(r.status, 400) << body << " -> " << r.body;
    }
    EXPECT_EQ(c.post("/api/v1/dlq/requeue?all=false", std::string()).status, 400);
    // Wrong types and conflicts.
    EXPECT_EQ(c.post("/api/v1/dlq/requeue", json{{"queue", 5}}).status, 400);
    EXPECT_EQ(c.post("/api/v1/dlq/requeue", json{{"all", "yes"}}).status, 400);
    EXPECT_EQ(c.post("/api/v1/dlq/requeue", json{{"queue", queue}, {"limit", 0}}).status, 400);
    EXPECT_EQ(c.post("/api/v1/dlq/requeue", json{{"queue", queue}, {"from", "not a time"}}).status, 400);
    EXPECT_EQ(c.post("/api/v1/dlq/requeue", std::string("[1]")).status, 400);
    EXPECT_EQ(c.post("/api/v1/dlq/requeue", std::string("{bad json")).status, 400);
    EXPECT_EQ(c.post("/api/v1/dlq/requeue?queue=" + q_arg(queue), json{{"queue", queue}}).status, 400);
    EXPECT_EQ(dead_letter_rows(), "1") << "nothing was requeued by the refused calls";
    // A filter that matches nothing is fine.
    auto none = c.post("/api/v1/dlq/requeue", json{{"queue", queue}, {"consumerGroup", "other"}});
    ASSERT_EQ(none.status, 200) << none.body;
    EXPECT_EQ(none.json()["requeued"], 0);
    EXPECT_EQ(none.json()["remaining"], 0);
    // limit: oldest first, the rest remains.
    push_payloads(c, queue, "", {json(2)});
    auto more = pop_messages(1, "g");
    ack_with(more[0], "dlq", "y", "g");
    auto first = c.post("/api/v1/dlq/requeue", json{{"queue", queue}, {"consumerGroup", "g"}, {"limit", 1}});
    ASSERT_EQ(first.status, 200) << first.body;
    EXPECT_EQ(first.json()["requeued"], 1);
    EXPECT_EQ(first.json()["remaining"], 1);
    EXPECT_EQ(first.json()["messages"][0]["transactionId"], msgs[0]["transactionId"]);
}

TEST_F(Dlq, PurgeByFilterAndRefusesAnEmptyFilter) {
    make_queue({json(1), json(2)});
    auto g1 = pop_messages(2, "g1");
    auto g2 = pop_messages(2, "g2");
    ack_with(g1[0], "dlq", "x", "g1");
    ack_with(g1[1], "dlq", "x", "g1");
    ack_with(g2[0], "dlq", "x", "g2");
    EXPECT_EQ(c.del("/api/v1/dlq").status, 400);
    EXPECT_EQ(c.del("/api/v1/dlq?all=false").status, 400);
    EXPECT_EQ(c.del("/api/v1/dlq?from=garbage&queue=" + q_arg(queue)).status, 400);
    EXPECT_EQ(dead_letter_rows(), "3");

    auto r = c.del("/api/v1/dlq?queue=" + q_arg(queue) + "&consumerGroup=g1");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["purged"], 2);
    EXPECT_EQ(r.json()["success"], true);
    auto left = list("queue=" + q_arg(queue));
    ASSERT_EQ(left["total"], 1);
    EXPECT_EQ(left["messages"][0]["consumerGroup"], "g2");
    auto rest = c.del("/api/v1/dlq?all=true&queue=" + q_arg(queue));
    ASSERT_EQ(rest.status, 200);
    EXPECT_EQ(rest.json()["purged"], 1);
    EXPECT_EQ(dead_letter_rows(), "0");
    // Purged, not requeued: nothing comes back.
    EXPECT_EQ(pop(c, queue, "batch=5&consumerGroup=g1").status, 204);
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

// A dead letter of a zstd segment keeps a copy of the segment (plain SQL cannot decode
// it); the broker decodes it for the listing and for a requeue, even after retention
// removed the live segment.
TEST_F(Dlq, ZstdSegmentCopiesAreDecodedByTheBroker) {
    make_queue({json("raw one")});
    const std::string pid = data_value(
        "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = '" + queue +
        "'");
    // Offsets 2 and 3 as one zstd segment.
    const std::string tx2 = "z-two", tx3 = "z-three", p2 = "{\"z\":2}", p3 = "[\"z\",3]", producer = "svc";
    const std::array<std::uint8_t, 16> trace{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x4d, 0xef,
                                             0x80, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77};
    const std::int64_t now_us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    std::vector<segment::frame_view> frames(2);
    frames[0].created_at_us = now_us;
    frames[0].transaction_id = tx2;
    frames[0].payload = p2;
    frames[1].created_at_us = now_us;
    frames[1].transaction_id = tx3;
    frames[1].trace_id = trace;
    frames[1].producer_sub = std::string_view(producer);
    frames[1].payload = p3;
    const std::string body = segment::encode(frames, segment::codec::zstd);
    // Run on every database; only the partition's own (one of them over shards) takes the rows.
    data_run("INSERT INTO queen.log_segments (partition_id, first_offset, last_offset, codec, created_at, body) "
             "SELECT id, 2, 3, 1, now(), '\\x" + hex(body) + "'::bytea FROM queen.log_partitions WHERE id = " + pid);
    data_run("UPDATE queen.log_partitions SET last_offset = 3, last_created_at = now() WHERE id = " + pid);

    auto msgs = pop_messages(3);
    ASSERT_EQ(msgs.size(), 3u);
    ASSERT_EQ(msgs[2]["transactionId"], tx3);
    json acks = json::array({{{"transactionId", msgs[0]["transactionId"]}, {"partitionId", pid}, {"offset", 1}},
                             {{"transactionId", tx2}, {"partitionId", pid}, {"offset", 2}},
                             {{"transactionId", tx3}, {"partitionId", pid}, {"offset", 3}, {"status", "dlq"},
                              {"error", "zstd failure"}}});
    auto a = c.post("/api/v1/ack/batch", json{{"acknowledgments", acks}});
    ASSERT_EQ(a.status, 200) << a.body;
    ASSERT_EQ(a.json()[2]["dlq"], true) << a.body;
    // On the stock path SQL cannot decode zstd, so the dead letter keeps a copy of the segment;
    // with queen_ext it is decoded at once and keeps the payload.
    EXPECT_EQ(data_value("SELECT (payload IS NULL AND segment IS NOT NULL)::text || '/' || "
                                "coalesce(segment_first_offset::text, 'none') FROM queen.dead_letters "
                                "WHERE partition_id = " + pid),
              data_value("SELECT count(*) FROM pg_extension WHERE extname = 'queen_ext'") == "1" ? "false/none"
                                                                                        : "true/2");
    // Retention removes the live segment; the copy is all that is left.
    data_run("DELETE FROM queen.log_segments WHERE partition_id = " + pid + " AND first_offset = 2");

    auto listing = list("queue=" + q_arg(queue));
    ASSERT_EQ(listing["total"], 1);
    const auto& d = listing["messages"][0];
    EXPECT_EQ(d["offset"], 3);
    EXPECT_EQ(d["transactionId"], tx3);
    EXPECT_EQ(d["traceId"], segment::uuid_to_string(trace));
    EXPECT_EQ(d["producerSub"], producer);
    EXPECT_EQ(d["data"], json::parse(p3));
    EXPECT_EQ(d["errorMessage"], "zstd failure");

    auto r = c.post("/api/v1/dlq/requeue", json{{"queue", queue}});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["requeued"], 1);
    EXPECT_EQ(r.json()["skipped"], 0);
    auto again = pop_messages(5);
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0]["offset"], 4);
    EXPECT_EQ(again[0]["transactionId"], tx3);
    EXPECT_EQ(again[0]["traceId"], segment::uuid_to_string(trace));
    EXPECT_EQ(again[0]["producerSub"], producer);
    EXPECT_EQ(again[0]["data"], json::parse(p3));
    EXPECT_EQ(dead_letter_rows(), "0");
}

TEST_F(Dlq, ConcurrentRequeuesPushEachDeadLetterOnce) {
    make_queue({json(1), json(2), json(3), json(4), json(5), json(6)});
    auto msgs = pop_messages(6);
    ASSERT_EQ(msgs.size(), 6u);
    for (const auto& m : msgs) ack_with(m, "dlq", "x");
    ASSERT_EQ(dead_letter_rows(), "6");
    std::vector<std::thread> threads;
    std::vector<int> requeued(4, -1);
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&, i] {
            auto own = client();
            // Pushes to the same partition run alongside.
            push_payloads(own, queue, "", {json("concurrent")});
            auto r = own.post("/api/v1/dlq/requeue", json{{"queue", queue}});
            if (r.status == 200) requeued[i] = r.json()["requeued"].get<int>();
        });
    for (auto& t : threads) t.join();
    int sum = 0;
    for (int n : requeued) {
        EXPECT_GE(n, 0) << "every call answered 200";
        sum += n;
    }
    EXPECT_EQ(sum, 6);
    EXPECT_EQ(dead_letter_rows(), "0");
    EXPECT_EQ(data_value("SELECT count(*) || '/' || count(DISTINCT \"offset\") || '/' || max(\"offset\") "
                                "FROM queen.messages WHERE queue = '" + queue + "'"),
              "16/16/16")
        << "6 originals, 4 pushes, 6 requeued: dense offsets, nothing doubled";
}

TEST_F(Dlq, DeletingTheQueueRemovesItsDeadLetters) {
    make_queue({json(1)});
    auto msgs = pop_messages(1);
    ack_with(msgs[0], "dlq", "x");
    EXPECT_EQ(list("queue=" + q_arg(queue))["total"], 1);
    ASSERT_EQ(c.del("/api/v1/resources/queues/" + q_arg(queue)).status, 200);
    EXPECT_EQ(list("queue=" + q_arg(queue))["total"], 0);
}

}  // namespace
}  // namespace queen::test
