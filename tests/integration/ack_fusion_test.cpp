// Ack fusion (docs/architecture.md, "Fused acknowledgements"): concurrent ack requests of one
// group are applied in few transactions, yet each request gets exactly its own answers, two
// requests on the same partition are never merged, and a request whose cursor is held
// elsewhere neither waits inside the fused call nor holds its neighbours back.
#include "concurrent_requests.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <libpq-fe.h>

#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace queen::test;
using nlohmann::json;

// The acks of a pop's messages, all `completed`.
json completions(const json& messages) {
    json acks = json::array();
    for (const auto& m : messages)
        acks.push_back({{"transactionId", m["transactionId"]},
                        {"partitionId", m["partitionId"]},
                        {"leaseId", m["leaseId"]},
                        {"status", "completed"}});
    return acks;
}

// Sends the bodies to /api/v1/ack/batch at once, each on its own connection; the replies.
std::vector<http_reply> ack_together(const broker_process& b, const std::vector<std::string>& bodies) {
    std::vector<together_request> requests;
    for (const auto& body : bodies) requests.push_back({"POST", "/api/v1/ack/batch", body});
    return send_together(b.port(), requests);
}

std::string cursors_of(const test_cluster& db, const std::string& queue) {
    return db.run_sql(
        "SELECT string_agg(p.name || ':' || c.committed || ':' || (c.lease_id IS NOT NULL), ',' ORDER BY p.name) "
        "FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id "
        "JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = " + quote(queue) + " AND p.name <> 'Default'");
}

}  // namespace

TEST(AckFusion, ConcurrentAcksShareFewCommitsAndEachGetsItsOwnAnswers) {
    test_cluster db;  // its own: no other broker adds commits to the count
    broker_process b(db.conninfo(), {{"QUEEN_ACK_FUSION_WAIT_US", "20000"},
                                     {"QUEEN_HOUSEKEEPING_INTERVAL_MS", "86400000"},
                                     {"QUEEN_CLAIM_FLOOR_INTERVAL_MS", "86400000"},
                                     {"QUEEN_STATS_INTERVAL_MS", "86400000"},
                                     {"QUEEN_METRICS_FLUSH_MS", "3600000"}});
    auto c = client_of(b);
    const std::string q = unique_name("ackfusion");
    configure_queue(c, q, {{"leaseTime", 300}});
    constexpr int n = 30;
    std::vector<json> popped(n);
    for (int i = 0; i < n; ++i) {
        const std::string part = "p" + std::string(i < 10 ? "0" : "") + std::to_string(i);
        push_payloads(c, q, part, {json{{"i", i}, {"k", 0}}, json{{"i", i}, {"k", 1}}});
        auto r = pop(c, q, "batch=2", part);
        ASSERT_EQ(r.status, 200) << r.body;
        popped[i] = r.json()["messages"];
        ASSERT_EQ(popped[i].size(), 2u);
    }
    // One request per partition, and a 31st that acknowledges p00's second message again:
    // it shares p00 with request 0, so it is never merged into request 0's walk.
    std::vector<std::string> bodies;
    for (int i = 0; i < n; ++i)
        bodies.push_back(json{{"acknowledgments", completions(popped[i])}}.dump());
    bodies.push_back(json{{"acknowledgments", completions(json::array({popped[0][1]}))}}.dump());

    commit_counter commits(db);
    const long long before = commits.stable();
    const auto replies = ack_together(b, bodies);
    const long long used = commits.stable() - before;
    std::cout << "[ fusion   ] " << bodies.size() << " concurrent ack requests: " << used << " commits\n";

    // Request 0 and the repeat share p00: one runs after the other, never merged into one
    // walk (which would answer neither as a noop). Whichever ran second finds offset 2 committed.
    ASSERT_EQ(replies[n].status, 200) << replies[n].body;
    const auto repeat = replies[n].json();
    ASSERT_EQ(repeat.size(), 1u);
    EXPECT_EQ(repeat[0]["success"], true) << repeat[0];
    EXPECT_EQ(repeat[0]["offset"], 2);
    const bool repeat_second = repeat[0].value("noop", false);
    for (int i = 0; i < n; ++i) {
        SCOPED_TRACE("request " + std::to_string(i));
        ASSERT_EQ(replies[i].status, 200) << replies[i].body;
        const auto answers = replies[i].json();
        ASSERT_EQ(answers.size(), 2u);
        const bool noops = i == 0 && !repeat_second;
        for (int k = 0; k < 2; ++k) {
            EXPECT_EQ(answers[k]["success"], true) << answers[k];
            EXPECT_EQ(answers[k]["transactionId"], popped[i][k]["transactionId"]);
            EXPECT_EQ(answers[k]["offset"], k + 1);
            EXPECT_EQ(answers[k].value("noop", false), noops) << answers[k];
            EXPECT_EQ(answers[k]["error"], nullptr);
        }
        // The state of the partition's lease after the request (both acks end it).
        for (int k = 0; k < 2 && !noops; ++k) EXPECT_EQ(answers[k]["leaseReleased"], true);
    }

    std::string expected;
    for (int i = 0; i < n; ++i)
        expected += std::string(expected.empty() ? "" : ",") + "p" + (i < 10 ? "0" : "") + std::to_string(i) + ":2:false";
    EXPECT_EQ(cursors_of(db, q), expected);
    EXPECT_EQ(pop(c, q, "batch=10").status, 204) << "every message was acknowledged once";
    EXPECT_LT(used, 15) << bodies.size() << " concurrent ack requests were not fused";
}

TEST(AckFusion, ARequestWhoseCursorIsHeldNeitherWaitsInsideTheFusedCallNorHoldsOthersBack) {
    broker_process b(cluster().conninfo(), {{"QUEEN_ACK_FUSION_WAIT_US", "20000"}});
    auto c = client_of(b);
    const std::string q = unique_name("ackfusion-held");
    configure_queue(c, q, {{"leaseTime", 300}});
    std::vector<json> popped(3);
    for (int i = 0; i < 3; ++i) {
        const std::string part = "h" + std::to_string(i);
        push_payloads(c, q, part, {json(i)});
        auto r = pop(c, q, "batch=1", part);
        ASSERT_EQ(r.status, 200) << r.body;
        popped[i] = r.json()["messages"];
    }
    // Another session holds h0's cursor (as a transaction or another broker's ack would).
    std::unique_ptr<PGconn, decltype(&PQfinish)> holder(PQconnectdb(cluster().conninfo().c_str()), &PQfinish);
    ASSERT_EQ(PQstatus(holder.get()), CONNECTION_OK);
    auto run = [&](const std::string& sql) {
        std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(holder.get(), sql.c_str()), &PQclear);
        const auto st = PQresultStatus(r.get());
        ASSERT_TRUE(st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) << PQerrorMessage(holder.get());
    };
    run("BEGIN");
    run("SELECT 1 FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id "
        "JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = " + quote(q) + " AND p.name = 'h0' FOR UPDATE OF c");
    std::vector<std::string> bodies;
    for (int i = 0; i < 3; ++i) bodies.push_back(json{{"acknowledgments", completions(popped[i])}}.dump());
    std::vector<http_reply> replies;
    std::thread acks([&] { replies = ack_together(b, bodies); });
    // h1 and h2 are acknowledged while h0 is still held.
    EXPECT_TRUE(eventually([&] { return cursors_of(cluster(), q) == "h0:0:true,h1:1:false,h2:1:false"; }, 10s))
        << cursors_of(cluster(), q);
    run("COMMIT");
    acks.join();
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(replies[i].status, 200) << replies[i].body;
        EXPECT_EQ(replies[i].json()[0]["success"], true) << replies[i].body;
    }
    EXPECT_EQ(cursors_of(cluster(), q), "h0:1:false,h1:1:false,h2:1:false");
}
