// ConsumerGroups under load: consumers, a producer and every administrative call at once never
// fail or deadlock, and a seek to the beginning afterwards replays everything in order.
//
// Consumer-group administration through the real broker (docs/consumer-groups.md), each call
// checked by what the next pops deliver, and the refused calls (400, 404) checked to change
// nothing. The other ConsumerGroups tests: consumer_groups_*_test.cpp.
#include "consumer_groups_support.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

using namespace consumer_groups_support;
using nlohmann::json;
using namespace std::chrono_literals;

// Consumers, a producer and every administrative call at once: lock order (queue rows, then
// cursor rows by partition id) must hold — no deadlock, no 5xx — and after the storm a final
// seek to the beginning still replays every message once per partition in order.
TEST_F(ConsumerGroups, AdministrationUnderLoadNeverFailsOrDeadlocks) {
    const std::string q = unique_name("cg-storm"), g = unique_name("cg-g");
    const std::vector<std::string> parts{"P1", "P2", "P3", "P4", "P5", "P6"};
    for (const auto& p : parts) push_payloads(c, q, p, {p + "-0"});
    std::atomic<bool> stop{false};
    std::atomic<int> failures{0}, pops{0}, admin_calls{0};
    std::mutex failure_mutex;
    std::string first_failure;
    auto fail = [&](const std::string& what) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (failures++ == 0) first_failure = what;
    };

    auto consumer = [&] {
        http_client cc = client();
        while (!stop) {
            auto r = pop(cc, q, "batch=5&partitions=2&consumerGroup=" + g);
            if (r.status == 204) continue;
            if (r.status != 200) {
                fail("pop " + std::to_string(r.status) + " " + r.body);
                continue;
            }
            ++pops;
            json body = r.json();
            json acks = json::array();
            for (const auto& m : body["messages"])
                acks.push_back({{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                                {"leaseId", m["leaseId"]}, {"status", "completed"}});
            auto e = cc.post("/api/v1/lease/" + body["leaseId"].get<std::string>() + "/extend", std::string("{}"));
            if (e.status != 200) fail("extend " + std::to_string(e.status) + " " + e.body);
            auto a = cc.post("/api/v1/ack/batch", json{{"consumerGroup", g}, {"acknowledgments", acks}});
            if (a.status != 200) fail("ack " + std::to_string(a.status) + " " + a.body);
        }
    };
    auto producer = [&] {
        http_client pc = client();
        int i = 0;
        while (!stop) {
            const std::string p = parts[static_cast<std::size_t>(i % 6)];
            auto r = pc.post("/api/v1/push", json{{"items", json::array({{{"queue", q}, {"partition", p},
                                                                          {"payload", p + "-" + std::to_string(++i)}}})}});
            if (r.status != 201) fail("push " + std::to_string(r.status) + " " + r.body);
        }
    };
    auto admin = [&] {
        http_client ac = client();
        const std::string base = "/api/v1/consumer-groups/" + url_encode(g);
        int i = 0;
        while (!stop) {
            http_reply r;
            switch (i++ % 8) {
                case 0: r = ac.post(base + "/queues/" + url_encode(q) + "/seek", std::string(R"({"toEnd":true})")); break;
                case 1:
                    r = ac.post(base + "/queues/" + url_encode(q) + "/seek",
                                std::string(R"({"timestamp":"2000-01-01T00:00:00Z"})"));
                    break;
                case 2: r = ac.del(base + "/queues/" + url_encode(q)); break;
                case 3: r = ac.post(base + "/queues/" + url_encode(q) + "/partitions/P3/seek", std::string()); break;
                case 4: r = ac.del(base); break;
                case 5: r = ac.get(base); break;
                case 6: r = ac.get("/api/v1/consumer-groups"); break;
                case 7: r = ac.del(base + "?deleteMetadata=true"); break;
            }
            ++admin_calls;
            // 404: the group may be forgotten for a moment (deleteMetadata) until the next pop.
            if (r.status != 200 && r.status != 404) fail("admin " + std::to_string(r.status) + " " + r.body);
        }
    };
    std::vector<std::thread> threads;
    threads.emplace_back(consumer);
    threads.emplace_back(consumer);
    threads.emplace_back(producer);
    threads.emplace_back(admin);
    std::this_thread::sleep_for(3s);
    stop = true;
    for (auto& t : threads) t.join();
    RecordProperty("pops", pops.load());
    RecordProperty("admin_calls", admin_calls.load());
    EXPECT_EQ(failures.load(), 0) << first_failure;
    EXPECT_GT(pops.load(), 0);
    EXPECT_GT(admin_calls.load(), 8);
    EXPECT_EQ(broker().log().find("deadlock"), std::string::npos);

    // Whatever happened, a seek to the beginning replays every partition completely, in order.
    // A pop (re)registers the group whatever it answers: 204 when the last admin call was a
    // seek to the end or the consumers had caught up on P1, 200 otherwise.
    const int registering = pop(c, q, "batch=1&consumerGroup=" + g, "P1").status;
    ASSERT_TRUE(registering == 200 || registering == 204) << registering;
    ASSERT_EQ(seek(g, q, R"({"timestamp":"2000-01-01T00:00:00Z"})").status, 200);
    const long long total = data_sum(
        "SELECT sum(queen.partition_last_offset(p.id)) FROM queen.log_partitions p JOIN queen.queues qu ON qu.id = p.queue_id "
        "WHERE qu.name = " + quote(q));
    std::map<std::string, long long> last;
    long long seen = 0;
    for (int guard = 0; guard < 10000; ++guard) {
        auto r = pop(c, q, "batch=100&consumerGroup=" + g);
        if (r.status == 204) break;
        ASSERT_EQ(r.status, 200) << r.body;
        json body = r.json();
        for (const auto& m : body["messages"]) {
            const std::string part = m["partition"];
            const long long off = m["offset"];
            EXPECT_EQ(off, last[part] + 1) << part;
            last[part] = off;
            ++seen;
        }
        ack_body(c, body, g);
    }
    RecordProperty("replayed", static_cast<int>(seen));
    EXPECT_EQ(seen, total);
}

}  // namespace
}  // namespace queen::test
