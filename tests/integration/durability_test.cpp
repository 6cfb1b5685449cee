// What survives a broker's death: pushes answered 201, retried pushes, leases of dead consumers.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;

TEST(Durability, AnsweredPushesSurviveKill9AndRetriesStoreEachMessageOnce) {
    broker_process b(cluster().conninfo());
    auto q = unique_name("kill9");
    constexpr int total = 2000;
    std::atomic<int> answered{0};
    std::set<int> acknowledged;
    std::mutex mu;
    // Producers push with fixed transaction ids while the broker is killed under them.
    std::vector<std::thread> producers;
    for (int p = 0; p < 4; ++p)
        producers.emplace_back([&, p] {
            try {
                auto c = client_of(b);
                for (int i = p; i < total; i += 4 * 10) {
                    json items = json::array();
                    for (int k = i; k < std::min(total, i + 40); k += 4)
                        items.push_back({{"queue", q}, {"partition", "p" + std::to_string(k % 7)},
                                         {"transactionId", "m" + std::to_string(k)}, {"payload", k}});
                    auto r = c.post("/api/v1/push", json{{"items", items}});
                    if (r.status != 201) continue;
                    std::lock_guard lock(mu);
                    for (auto& it : items) acknowledged.insert(it["payload"].get<int>());
                    answered += static_cast<int>(items.size());
                }
            } catch (...) {
                // The broker died under this producer: expected.
            }
        });
    while (answered.load() < 200) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    b.kill9();
    for (auto& t : producers) t.join();
    std::set<int> before;
    {
        std::lock_guard lock(mu);
        before = acknowledged;
    }
    // Every push answered 201 is stored.
    auto stored = cluster().run_sql("SELECT count(*) FROM queen.messages WHERE queue = '" + q + "'");
    EXPECT_GE(std::stoi(stored), static_cast<int>(before.size()));

    // The client retries everything (answered or not) with the same ids after a restart.
    b.restart();
    auto c = client_of(b);
    for (int i = 0; i < total; i += 100) {
        json items = json::array();
        for (int k = i; k < i + 100; ++k)
            items.push_back({{"queue", q}, {"partition", "p" + std::to_string(k % 7)},
                             {"transactionId", "m" + std::to_string(k)}, {"payload", k}});
        auto r = c.post("/api/v1/push", json{{"items", items}});
        ASSERT_EQ(r.status, 201) << r.body;
        for (auto& a : r.json())
            if (before.count(a["index"].get<int>() + i)) {
                EXPECT_EQ(a["status"], "duplicate");
            }
    }
    EXPECT_EQ(cluster().run_sql("SELECT count(*) FROM queen.messages WHERE queue = '" + q + "'"),
              std::to_string(total));
    EXPECT_EQ(cluster().run_sql("SELECT count(DISTINCT transaction_id) FROM queen.messages WHERE queue = '" + q + "'"),
              std::to_string(total));
    // Offsets are dense per partition.
    EXPECT_EQ(cluster().run_sql("SELECT count(*) FROM (SELECT partition, max(\"offset\") AS m, count(*) AS n FROM "
                                "queen.messages WHERE queue = '" + q + "' GROUP BY partition) x WHERE m <> n"),
              "0");
}

TEST(Durability, AConsumerThatDiesMidSpanGetsTheSpanBackAfterTheLease) {
    broker_process b(cluster().conninfo());
    auto q = unique_name("dies");
    auto c = client_of(b);
    // The lease outlives a broker's restart even on a loaded machine (the suite runs sharded).
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"leaseTime", 5}}}}).status, 200);
    push_payloads(c, q, "", {json(1), json(2), json(3)});
    auto first = pop(c, q, "batch=3").json();
    ASSERT_EQ(first["messages"].size(), 3u);
    // Consumer and broker die together; another broker serves the span after the lease.
    b.kill9();
    broker_process other(cluster().conninfo());
    auto c2 = client_of(other);
    EXPECT_EQ(pop(c2, q, "batch=3").status, 204) << "the lease still lives";
    http_reply again;
    ASSERT_TRUE(eventually([&] {
        again = pop(c2, q, "batch=3");
        return again.status == 200;
    }));
    auto msgs = again.json()["messages"];
    ASSERT_EQ(msgs.size(), 3u);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(msgs[i]["id"], first["messages"][i]["id"]);
}

}  // namespace
}  // namespace queen::test
