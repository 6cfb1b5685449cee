// MaintenanceOutage: a PostgreSQL outage (a fast shutdown, or the postmaster killed) under steady
// push load: what is accepted meanwhile is spooled and drained, and nothing is lost or doubled
// and the order per partition holds; the other routes answer 503 meanwhile.
//
// Maintenance and the spool (docs/maintenance-and-spool.md). The other files of these suites:
// maintenance_flags, _restart and _outage_test.cpp.
#include "maintenance_support.hpp"
#include "test_cluster.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

using namespace maintenance_support;
using nlohmann::json;
using namespace std::chrono_literals;

// The outage test: steady pushes while PostgreSQL is stopped and started again.
// How the database goes away: a fast shutdown (the server tells its clients), or its
// postmaster killed by SIGKILL (a crash: crash recovery at the next start).
enum class outage { shutdown, crash };

void outage_under_load(outage kind) {
    // A crash loses commits not yet written out unless they are synchronous.
    std::map<std::string, std::string> settings;
    if (kind == outage::crash) settings["synchronous_commit"] = "on";
    test_cluster pg(settings);
    temp_dir dir("spool-it");
    broker_process b(pg.conninfo(), spool_env(dir));
    auto c = client_of(b);
    const auto q0 = unique_name("outage-w0"), q1 = unique_name("outage-w3600"), qa = unique_name("outage-ack");
    configure_queue(c, q0, {{"dedupWindowSeconds", 0}});
    configure_queue(c, q1, {{"dedupWindowSeconds", 3600}});
    push_payloads(c, qa, "", {json("leased across the outage")});
    auto message = pop(c, qa).json()["messages"][0];
    const std::vector<std::string> partitions{"a", "b", "c"};

    std::mutex mu;
    std::map<std::string, std::vector<std::string>> answered;  // queue -> "partition|txid" in push order
    std::map<std::string, int> statuses;
    std::atomic<int> accepted{0};
    std::atomic<bool> stop{false};
    std::atomic<int> failures{0};
    std::thread producer([&] {
        auto pc = std::make_unique<http_client>(client_of(b));
        for (int r = 0; !stop; ++r) {
            json items = json::array();
            for (int k = 0; k < 4; ++k) {
                const auto& q = (r + k) % 2 ? q0 : q1;
                items.push_back({{"queue", q}, {"partition", partitions[static_cast<std::size_t>(r + k) % 3]},
                                 {"transactionId", "o" + std::to_string(r) + "-" + std::to_string(k)},
                                 {"payload", {{"r", r}, {"k", k}}}});
            }
            http_reply reply;
            try {
                reply = pc->post("/api/v1/push", json{{"items", items}});
            } catch (...) {
                ++failures;
                pc = std::make_unique<http_client>(client_of(b));
                continue;
            }
            if (reply.status != 201) {
                ++failures;
                continue;
            }
            auto answer = reply.json();
            std::lock_guard lock(mu);
            for (std::size_t k = 0; k < answer.size(); ++k) {
                auto st = answer[k]["status"].get<std::string>();
                ++statuses[st];
                if (st == "queued" || st == "buffered")
                    answered[items[k]["queue"]].push_back(items[k]["partition"].get<std::string>() + "|" +
                                                          items[k]["transactionId"].get<std::string>());
            }
            accepted += static_cast<int>(answer.size());
            std::this_thread::sleep_for(2ms);
        }
    });

    ASSERT_TRUE(wait_until([&] { return accepted.load() >= 400; }, 20s));
    if (kind == outage::crash) pg.kill_postmaster();
    else pg.stop();
    const int before_outage = accepted.load();

    // During the outage: pushes are accepted (buffered); what cannot be spooled is 503.
    ASSERT_TRUE(wait_until([&] { return accepted.load() >= before_outage + 200; }, 20s));
    EXPECT_GT(buffered(c), 0u);
    auto check_503 = [](const http_reply& r, const std::string& what) {
        EXPECT_EQ(r.status, 503) << what << ": " << r.body;
        EXPECT_EQ(r.headers.count("retry-after") ? r.headers.at("retry-after") : "", "1") << what;
    };
    check_503(pop(c, q0, "batch=5"), "pop");
    // A long-poll stays parked through the outage (claiming again at each re-check) and, with
    // nothing it could claim, answers 204 at its deadline.
    EXPECT_EQ(pop(c, q0, "wait=true&timeout=2000").status, 204);
    check_503(c.post("/api/v1/ack", json{{"transactionId", message["transactionId"]},
                                         {"partitionId", message["partitionId"]},
                                         {"leaseId", message["leaseId"]},
                                         {"status", "completed"}}),
              "ack");
    check_503(c.post("/api/v1/ack/batch", json{{"acknowledgments", json::array({{{"transactionId", "x"},
                                                                                  {"partitionId", "1"},
                                                                                  {"status", "completed"}}})}}),
              "ack batch");
    check_503(c.post("/api/v1/transaction",
                     json{{"operations", json::array({{{"type", "ack"}, {"transactionId", message["transactionId"]},
                                                       {"partitionId", message["partitionId"]},
                                                       {"status", "completed"}}})}}),
              "transaction");
    check_503(c.post("/api/v1/transaction",
                     json{{"operations", json::array({{{"type", "push"}, {"items", {{{"queue", q0}, {"payload", 1}}}}}})}}),
              "transaction with a push");
    check_503(c.post("/api/v1/configure", json{{"queue", q0}}), "configure");
    check_503(c.post(maintenance_path, json{{"enabled", true}}), "setting maintenance");
    EXPECT_EQ(c.get("/health").status, 503);
    std::this_thread::sleep_for(3s);  // a few seconds of outage under load

    pg.start();
    // Back: the spool drains while the producer keeps pushing (behind the spool, in order).
    ASSERT_TRUE(wait_until([&] { return buffered(c) == 0; }, 30s)) << get_status(c) << b.log();
    const int after_drain = accepted.load();
    ASSERT_TRUE(wait_until([&] { return accepted.load() >= after_drain + 100; }, 20s));
    stop = true;
    producer.join();
    ASSERT_TRUE(wait_until([&] { return buffered(c) == 0; }, 30s)) << get_status(c);

    std::lock_guard lock(mu);
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(statuses["duplicate"], 0);
    EXPECT_GT(statuses["buffered"], 0);
    EXPECT_GT(statuses["queued"], 0);
    for (const auto& q : {q0, q1}) {
        auto expect = answered[q];
        std::stable_sort(expect.begin(), expect.end(), [](const std::string& a, const std::string& b) {
            return a.substr(0, a.find('|')) < b.substr(0, b.find('|'));
        });
        // Every accepted push is stored exactly once, in the producer's order per partition.
        EXPECT_EQ(stored(pg, q), expect) << q;
        EXPECT_EQ(gaps(pg, q), "0") << q;
        // A consumer reads them all, in order, with no gap.
        std::vector<std::string> consumed;
        auto cc = client_of(b);
        for (const auto& part : partitions) {
            auto got = consume_partition(cc, q, part);
            consumed.insert(consumed.end(), got.begin(), got.end());
        }
        EXPECT_EQ(consumed, expect) << q;
    }
}

TEST(MaintenanceOutage, NothingAcceptedDuringADatabaseOutageIsLostOrDoubledAndOrderHolds) {
    outage_under_load(outage::shutdown);
}

TEST(MaintenanceOutage, NothingAcceptedWhileThePostmasterIsKilledIsLostOrDoubled) {
    outage_under_load(outage::crash);
}

}  // namespace
}  // namespace queen::test
