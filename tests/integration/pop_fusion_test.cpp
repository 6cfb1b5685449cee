// Pop fusion (docs/architecture.md, "Fused pops"): concurrent queue-wide pops of one queue and
// group are answered from few database calls, yet each pop gets what it would have got alone:
// its own lease, at most its batch over at most its partitions, the oldest waiting partitions
// first, and no partition in two answers.
#include "concurrent_requests.hpp"
#include "prometheus_samples.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace queen::test;
using nlohmann::json;

// Sends the GET targets at once, each on its own connection; the replies.
std::vector<http_reply> get_together(const broker_process& b, const std::vector<std::string>& targets) {
    std::vector<together_request> requests;
    for (const auto& target : targets) requests.push_back({"GET", target, ""});
    return send_together(b.port(), requests);
}

std::string two_digits(int i) { return (i < 10 ? "p0" : "p") + std::to_string(i); }

// partition name -> lease id of its cursor's newest version ("" when none).
std::map<std::string, std::string> leases_of(const test_cluster& db, const std::string& queue) {
    const auto text = db.run_sql(
        "SELECT string_agg(p.name || '=' || coalesce(c.lease_id::text, ''), ',' ORDER BY p.name) "
        "FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id "
        "CROSS JOIN LATERAL (SELECT lc.lease_id FROM queen.log_consumers lc WHERE lc.partition_id = p.id "
        "ORDER BY lc.version DESC LIMIT 1) c WHERE q.name = " + quote(queue));
    std::map<std::string, std::string> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto comma = text.find(',', pos);
        if (comma == std::string::npos) comma = text.size();
        const auto item = text.substr(pos, comma - pos);
        const auto eq = item.find('=');
        out[item.substr(0, eq)] = item.substr(eq + 1);
        pos = comma + 1;
    }
    return out;
}


}  // namespace

TEST(PopFusion, ConcurrentPopsShareFewCommitsAndEachGetsItsOwnLeaseAndTheOldestPartitions) {
    test_cluster db;  // its own: no other broker adds commits to the count
    broker_process b(db.conninfo(), {{"QUEEN_POP_FUSION_WAIT_US", "20000"},
                                     {"QUEEN_HOUSEKEEPING_INTERVAL_MS", "86400000"},
                                     {"QUEEN_CLAIM_FLOOR_INTERVAL_MS", "86400000"},
                                     {"QUEEN_STATS_INTERVAL_MS", "86400000"},
                                     {"QUEEN_METRICS_FLUSH_MS", "3600000"}});
    auto c = client_of(b);
    const std::string q = unique_name("popfusion");
    configure_queue(c, q, {{"leaseTime", 300}});
    // 24 partitions of three messages, p00 first: p00 holds the oldest waiting messages.
    for (int i = 0; i < 24; ++i) push_payloads(c, q, two_digits(i), {json{{"i", i}, {"k", 1}}, json{{"i", i}, {"k", 2}},
                                                                   json{{"i", i}, {"k", 3}}});
    ASSERT_EQ(pop(c, q, "batch=1&autoAck=true", "p23").status, 200);  // the queue-mode cursors exist

    // 12 pops of one partition and batch 3, 4 pops of two partitions and batch 6: 20 partitions.
    const std::string base = "/api/v1/pop/queue/" + q;
    std::vector<std::string> targets;
    for (int i = 0; i < 12; ++i) targets.push_back(base + "?batch=3");
    for (int i = 0; i < 4; ++i) targets.push_back(base + "?batch=6&partitions=2");
    commit_counter commits(db);
    const long long before = commits.stable();
    const auto replies = get_together(b, targets);
    const long long used = commits.stable() - before;
    std::cout << "[ fusion   ] " << targets.size() << " concurrent pops: " << used << " commits\n";

    std::set<std::string> partitions, leases;
    std::map<std::string, std::string> lease_of_partition;
    json acks = json::array();
    for (std::size_t r = 0; r < replies.size(); ++r) {
        SCOPED_TRACE("pop " + std::to_string(r));
        ASSERT_EQ(replies[r].status, 200) << replies[r].body;
        const auto body = replies[r].json();
        const std::string lease = body["leaseId"];
        EXPECT_TRUE(leases.insert(lease).second) << "a lease id in two answers";
        const auto& messages = body["messages"];
        const std::size_t wanted_partitions = r < 12 ? 1 : 2;
        ASSERT_EQ(messages.size(), 3 * wanted_partitions) << body;
        EXPECT_EQ(body["partitionsClaimed"], wanted_partitions);
        std::map<std::string, int> next_k;
        for (const auto& m : messages) {
            const std::string part = m["partition"];
            if (!next_k.count(part)) {
                EXPECT_TRUE(partitions.insert(part).second) << part << " handed out twice";
                next_k[part] = 1;
            }
            EXPECT_EQ(m["data"]["k"], next_k[part]++) << "order within " << part;
            EXPECT_EQ(m["leaseId"], lease);
            lease_of_partition[part] = lease;
            acks.push_back({{"transactionId", m["transactionId"]},
                            {"partitionId", m["partitionId"]},
                            {"leaseId", m["leaseId"]},
                            {"status", "completed"}});
        }
        EXPECT_EQ(next_k.size(), wanted_partitions);
    }
    // The oldest 20 partitions, each leased under the id its answer carried.
    std::set<std::string> oldest;
    for (int i = 0; i < 20; ++i) oldest.insert(two_digits(i));
    EXPECT_EQ(partitions, oldest);
    const auto stored = leases_of(db, q);
    for (const auto& [part, lease] : lease_of_partition) EXPECT_EQ(stored.at(part), lease) << part;
    EXPECT_LT(used, 8) << targets.size() << " concurrent pops were not fused";
    // Every pop went through a fused call, in as many calls as commits.
    const auto samples = parse_exposition(c.get("/metrics/prometheus").body);
    EXPECT_EQ(value_of(samples, "queen_pop_fusion_batch_requests_sum", {}), 16);
    const double calls = value_of(samples, "queen_pop_fusion_batch_requests_count", {}).value_or(-1);
    EXPECT_GE(calls, 1);
    EXPECT_LE(calls, used);

    auto acked = c.post("/api/v1/ack/batch", json{{"acknowledgments", acks}}.dump());
    ASSERT_EQ(acked.status, 200) << acked.body;
    const auto acked_body = acked.json();
    for (const auto& a : acked_body) EXPECT_EQ(a["success"], true) << a;
    // What is left: p20 to p22 whole, and p23 after its first message.
    auto rest = pop(c, q, "batch=100&partitions=10&autoAck=true");
    ASSERT_EQ(rest.status, 200) << rest.body;
    std::map<std::string, int> left;
    const auto rest_body = rest.json();
    for (const auto& m : rest_body["messages"]) ++left[m["partition"].get<std::string>()];
    EXPECT_EQ(left, (std::map<std::string, int>{{"p20", 3}, {"p21", 3}, {"p22", 3}, {"p23", 2}}));
}

TEST(PopFusion, PopsThatTakeOverExpiredLeasesGetTheSameAnswersTogetherAsAlone) {
    broker_process b(cluster().conninfo(), {{"QUEEN_POP_FUSION_WAIT_US", "20000"}});
    auto c = client_of(b);
    const std::string q = unique_name("popfusion-expired");
    configure_queue(c, q, {{"leaseTime", 1}, {"retryLimit", 5}});
    for (int i = 0; i < 6; ++i) push_payloads(c, q, two_digits(i), {json{{"i", i}}});
    // Every message leased once, never acknowledged.
    std::set<std::string> first;
    for (int i = 0; i < 6; ++i) {
        auto r = pop(c, q, "batch=1");
        ASSERT_EQ(r.status, 200) << r.body;
        first.insert(r.json()["messages"][0]["transactionId"].get<std::string>());
    }
    ASSERT_EQ(first.size(), 6u);
    ASSERT_EQ(pop(c, q, "batch=1").status, 204);
    std::this_thread::sleep_for(1500ms);

    // Six pops at once take the six expired leases over: each message exactly once again.
    const std::vector<std::string> targets(6, "/api/v1/pop/queue/" + q + "?batch=1");
    const auto replies = get_together(b, targets);
    std::set<std::string> again, leases;
    for (const auto& r : replies) {
        ASSERT_EQ(r.status, 200) << r.body;
        const auto body = r.json();
        ASSERT_EQ(body["messages"].size(), 1u) << r.body;
        again.insert(body["messages"][0]["transactionId"].get<std::string>());
        leases.insert(body["leaseId"].get<std::string>());
    }
    EXPECT_EQ(again, first);
    EXPECT_EQ(leases.size(), 6u);
    // Each take-over counted one attempt for its head (the lease expired unreleased).
    EXPECT_EQ(sql_int(cluster(), "SELECT count(*) FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id "
                                 "CROSS JOIN LATERAL (SELECT lc.attempts FROM queen.log_consumers lc "
                                 "WHERE lc.partition_id = p.id ORDER BY lc.version DESC LIMIT 1) c "
                                 "WHERE q.name = " + quote(q) + " AND c.attempts = 1"),
              6);
}
