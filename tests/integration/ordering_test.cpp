// Strict FIFO per partition under concurrent consumers.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;

TEST(Ordering, TenConcurrentConsumersOnOnePartitionProcessInStrictOrder) {
    auto c = client();
    auto q = unique_name("fifo");
    constexpr int total = 300;
    std::vector<json> payloads;
    for (int i = 1; i <= total; ++i) payloads.push_back(i);
    for (int i = 0; i < total; i += 100)
        push_payloads(c, q, "lane", std::vector<json>(payloads.begin() + i, payloads.begin() + i + 100));

    std::mutex mu;
    std::vector<int> processed;  // in the order consumers finished them
    std::atomic<int> done{0};
    std::vector<std::thread> consumers;
    for (int w = 0; w < 10; ++w)
        consumers.emplace_back([&] {
            auto cc = client();
            auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            while (done.load() < total && std::chrono::steady_clock::now() < deadline) {
                auto r = pop(cc, q, "batch=7&wait=true&timeout=200");
                if (r.status != 200) continue;
                auto msgs = r.json()["messages"];
                {
                    // Record while holding the lease: the next span cannot be handed out yet.
                    std::lock_guard lock(mu);
                    for (auto& m : msgs) processed.push_back(m["data"].get<int>());
                }
                done += static_cast<int>(msgs.size());
                ack(cc, msgs.back());
            }
        });
    for (auto& t : consumers) t.join();
    ASSERT_EQ(processed.size(), static_cast<std::size_t>(total));
    for (int i = 0; i < total; ++i) ASSERT_EQ(processed[i], i + 1) << "position " << i;
}

}  // namespace
}  // namespace queen::test
