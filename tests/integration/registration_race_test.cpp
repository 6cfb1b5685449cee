// A group's first pop racing the first push of a queue that does not exist yet must still
// give the group a cursor on every partition (found by the load generator: whole
// partitions were never delivered).
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;

TEST(Registration, FirstPopRacingTheFirstPushLeavesNoPartitionWithoutACursor) {
    for (int round = 0; round < 15; ++round) {
        auto q = unique_name("race-registration");
        json items = json::array();
        for (int p = 0; p < 200; ++p) items.push_back({{"queue", q}, {"partition", "p" + std::to_string(p)}, {"payload", p}});
        std::latch go(4);
        std::atomic<bool> pushed{false};
        std::thread pusher([&] {
            auto c = client();
            go.arrive_and_wait();
            EXPECT_EQ(c.post("/api/v1/push", json{{"items", items}}).status, 201);
            pushed = true;
        });
        // Poppers keep registering new groups while the push creates the queue.
        std::vector<std::thread> poppers;
        for (int t = 0; t < 2; ++t)
            poppers.emplace_back([&, t] {
                auto c = client();
                go.arrive_and_wait();
                // The partition route to a partition that never exists registers the group
                // (its start is recorded by its first pop) without leasing anything.
                for (int i = 0; !pushed; ++i)
                    pop(c, q, "consumerGroup=g" + std::to_string(t) + "-" + std::to_string(i), "none");
            });
        go.arrive_and_wait();
        pusher.join();
        for (auto& t : poppers) t.join();
        // Every group registered on the queue has a cursor on every partition.
        EXPECT_EQ(cluster().run_sql("SELECT count(*) FROM queen.consumer_groups g JOIN queen.queues q ON q.name = g.queue_name "
                                    "JOIN queen.log_partitions p ON p.queue_id = q.id WHERE q.name = '" + q + "' AND NOT EXISTS "
                                    "(SELECT 1 FROM queen.log_consumers c WHERE c.partition_id = p.id "
                                    "AND c.consumer_group = g.consumer_group)"),
                  "0") << "round " << round;
        // And every message is delivered to the first group that registered during the race.
        auto c = client();
        int got = 0;
        for (int i = 0; i < 400 && got < 200; ++i) {
            auto r = pop(c, q, "consumerGroup=g0-0&batch=200&partitions=200");
            if (r.status != 200) continue;
            auto msgs = r.json()["messages"];
            got += static_cast<int>(msgs.size());
            for (const auto& m : msgs) ack(c, m, "completed", "g0-0");
        }
        EXPECT_EQ(got, 200) << "round " << round;
    }
}

}  // namespace
}  // namespace queen::test
