// Push fusion and the connection pool under long-poll (docs/http-api.md push, pop; docs/architecture.md, fusion):
// - concurrent pushes are fused into few transactions (counted with pg_stat_database), yet
//   every request gets its own correct per-item answers and every message is stored once;
// - concurrent duplicates inside a fused batch resolve to one stored original;
// - a small pool never blocks a thread (or a connection) per parked pop.
#include "concurrent_requests.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <chrono>
#include <iostream>
#include <latch>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace queen::test;
using nlohmann::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

// Opens every connection of the broker's pool (and warms the push path) so that connection
// start-up transactions do not count in the measurement.
void warm_up(const broker_process& b) {
    const std::string q = unique_name("fusion-warmup");
    std::vector<std::thread> threads;
    for (int i = 0; i < 16; ++i)
        threads.emplace_back([&b, &q, i] {
            auto c = client_of(b);
            for (int k = 0; k < 3; ++k) {
                c.get("/health");
                c.post("/api/v1/push", json{{"items", json::array({json{{"queue", q},
                                                                      {"partition", "w" + std::to_string(i)},
                                                                      {"payload", k}}})}});
            }
        });
    for (auto& t : threads) t.join();
}

}  // namespace

TEST(Fusion, ConcurrentPushesShareFewCommitsAndEachGetsItsOwnAnswers) {
    // A cluster of its own: no other broker of this binary can add commits to the count.
    // Commits are counted for the whole database: the fused pushes' transactions and the
    // notifications the broker sends after them (one per flush).
    test_cluster db;
    // Housekeeping, claim-floor, stats-snapshot and activity-flush ticks (their own
    // transactions) are pushed far beyond the measurement.
    broker_process fused(db.conninfo(),
                         {{"QUEEN_PUSH_FUSION_WAIT_US", "20000"},
                          {"QUEEN_HOUSEKEEPING_INTERVAL_MS", "86400000"},
                          {"QUEEN_CLAIM_FLOOR_INTERVAL_MS", "86400000"},
                          {"QUEEN_STATS_INTERVAL_MS", "86400000"},
                          {"QUEEN_METRICS_FLUSH_MS", "3600000"}});
    warm_up(fused);
    commit_counter commits(db);

    // Control: sequential pushes cannot be fused, so the counter must see at least one commit each.
    {
        const std::string q = unique_name("fusion-sequential");
        const long long before = commits.stable();
        auto c = client_of(fused);
        for (int i = 0; i < 10; ++i) {
            auto r = c.post("/api/v1/push", json{{"items", json::array({json{{"queue", q}, {"payload", i}}})}});
            ASSERT_EQ(r.status, 201) << r.body;
        }
        const long long sequential = commits.stable() - before;
        std::cout << "[ fusion   ] 10 sequential pushes: " << sequential << " commits\n";
        ASSERT_GE(sequential, 10) << "the commit counter does not see the broker's transactions";
    }

    // 40 requests (plus 5 invalid neighbours), each from its own thread on its own connection;
    // each thread sends all but the last byte, then all send their last byte together.
    const std::string q = unique_name("fusion");
    constexpr int n = 40;
    constexpr int bad = 5;
    std::vector<http_reply> replies(n), bad_replies(bad);
    std::vector<std::string> errors(n + bad);
    std::latch ready(n + bad + 1);
    std::vector<std::thread> threads;
    const long long before = commits.stable();
    for (int i = 0; i < n + bad; ++i)
        threads.emplace_back([&, i] {
            std::optional<split_request> req;
            try {
                json items = json::array();
                if (i < n) {
                    for (int k = 0; k < 2; ++k)
                        items.push_back(json{{"queue", q},
                                             {"partition", "p" + std::to_string(i)},
                                             {"payload", {{"i", i}, {"k", k}}},
                                             {"transactionId", "tx-" + std::to_string(i) + "-" + std::to_string(k)}});
                } else {
                    // Neighbours that are rejected by validation.
                    items.push_back(json{{"queue", q}, {"partition", "bad"}, {"payload", 1}, {"traceId", "nope"}});
                }
                req.emplace(fused.port(), "/api/v1/push", json{{"items", items}}.dump());
            } catch (const std::exception& e) {
                errors[i] = e.what();
            }
            ready.arrive_and_wait();
            if (!req) return;
            try {
                req->finish();
                auto r = req->read_reply();
                if (i < n) replies[i] = std::move(r);
                else bad_replies[i - n] = std::move(r);
            } catch (const std::exception& e) {
                errors[i] = e.what();
            }
        });
    ready.arrive_and_wait();
    for (auto& t : threads) t.join();
    const long long fused_commits = commits.stable() - before;
    std::cout << "[ fusion   ] " << n << " concurrent push requests: " << fused_commits << " commits\n";

    for (int i = 0; i < n + bad; ++i) ASSERT_TRUE(errors[i].empty()) << "thread " << i << ": " << errors[i];
    for (const auto& r : bad_replies) {
        EXPECT_EQ(r.status, 400) << r.body;
        EXPECT_NE(r.body.find("traceId"), std::string::npos) << r.body;
    }

    std::set<std::string> partition_ids;
    std::vector<std::string> expected;
    for (int i = 0; i < n; ++i) {
        SCOPED_TRACE("request " + std::to_string(i));
        ASSERT_EQ(replies[i].status, 201) << replies[i].body;
        auto answers = replies[i].json();
        ASSERT_TRUE(answers.is_array());
        ASSERT_EQ(answers.size(), 2u);
        for (int k = 0; k < 2; ++k) {
            const auto& a = answers[k];
            EXPECT_EQ(a["index"], k);
            EXPECT_EQ(a["status"], "queued");
            EXPECT_EQ(a["transaction_id"], "tx-" + std::to_string(i) + "-" + std::to_string(k));
            EXPECT_EQ(a["queueName"], q);
            EXPECT_EQ(a["offset"], k + 1);
            EXPECT_TRUE(a["trace_id"].is_null());
            expected.push_back("p" + std::to_string(i) + ":" + std::to_string(k + 1) + ":" +
                               a["transaction_id"].get<std::string>() + ":" + a["message_id"].get<std::string>() +
                               ":" + std::to_string(i) + "/" + std::to_string(k));
        }
        EXPECT_EQ(answers[0]["partition_id"], answers[1]["partition_id"]);
        partition_ids.insert(answers[0]["partition_id"].get<std::string>());
    }
    EXPECT_EQ(partition_ids.size(), static_cast<std::size_t>(n)) << "each request has its own partition";

    // Every message stored exactly once, where its answer said, and nothing for the rejected ones.
    std::sort(expected.begin(), expected.end());
    std::string expected_text;
    for (const auto& e : expected) expected_text += (expected_text.empty() ? "" : ",") + e;
    EXPECT_EQ(db.run_sql("SELECT string_agg(x, ',' ORDER BY x COLLATE \"C\") FROM ("
                                "SELECT partition || ':' || \"offset\" || ':' || transaction_id || ':' || id || ':' || "
                                "(payload->>'i') || '/' || (payload->>'k') AS x FROM queen.messages WHERE queue = " + quote(q) + ") m"),
              expected_text);
    EXPECT_EQ(db.run_sql("SELECT count(*) FROM queen.messages WHERE queue = " + quote(q)),
              std::to_string(2 * n));
    EXPECT_EQ(db.run_sql("SELECT count(*) FROM queen.log_partitions p JOIN queen.queues qu "
                                "ON qu.id = p.queue_id WHERE qu.name = " + quote(q) + " AND p.name = 'bad'"),
              "0");

    // Fused: far fewer commits than requests (each unfused request would cost at least one).
    EXPECT_GE(fused_commits, 1) << "the stored messages were committed somehow";
    EXPECT_LT(fused_commits, 20) << "40 concurrent pushes were not fused";
}

TEST(Fusion, ConcurrentDuplicatesInsideAFusedBatchResolveToOneOriginal) {
    broker_process fused(cluster().conninfo(), {{"QUEEN_PUSH_FUSION_WAIT_US", "20000"}});
    const std::string q = unique_name("fusion-dup");
    constexpr int n = 20;
    std::vector<http_reply> replies(n);
    std::vector<std::string> errors(n);
    std::latch ready(n + 1);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
        threads.emplace_back([&, i] {
            try {
                auto c = client_of(fused);
                const std::string body =
                    json{{"items", json::array({json{{"queue", q},
                                                     {"partition", "shared"},
                                                     {"transactionId", "same-tx"},
                                                     {"payload", i}},
                                                json{{"queue", q},
                                                     {"partition", "shared"},
                                                     {"transactionId", "own-" + std::to_string(i)},
                                                     {"payload", 100 + i}}})}}
                        .dump();
                ready.arrive_and_wait();
                replies[i] = c.post("/api/v1/push", body);
            } catch (const std::exception& e) {
                errors[i] = e.what();
            }
        });
    ready.arrive_and_wait();
    for (auto& t : threads) t.join();

    int queued = 0;
    std::string original_id;
    std::set<std::string> duplicate_ids;
    std::set<long long> own_offsets;
    for (int i = 0; i < n; ++i) {
        ASSERT_TRUE(errors[i].empty()) << errors[i];
        ASSERT_EQ(replies[i].status, 201) << replies[i].body;
        auto a = replies[i].json();
        ASSERT_EQ(a.size(), 2u);
        EXPECT_EQ(a[0]["transaction_id"], "same-tx");
        if (a[0]["status"] == "queued") {
            ++queued;
            original_id = a[0]["message_id"];
        } else {
            EXPECT_EQ(a[0]["status"], "duplicate") << a[0].dump();
            duplicate_ids.insert(a[0]["message_id"].get<std::string>());
        }
        EXPECT_EQ(a[1]["status"], "queued") << a[1].dump();
        own_offsets.insert(a[1]["offset"].get<long long>());
    }
    EXPECT_EQ(queued, 1);
    ASSERT_EQ(duplicate_ids.size(), 1u);
    EXPECT_EQ(*duplicate_ids.begin(), original_id) << "duplicates name the stored original";
    EXPECT_EQ(own_offsets.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(cluster().run_sql("SELECT count(*) FROM queen.messages WHERE queue = " + quote(q) +
                                " AND transaction_id = 'same-tx'"),
              "1");
    EXPECT_EQ(cluster().run_sql("SELECT id FROM queen.messages WHERE queue = " + quote(q) +
                                " AND transaction_id = 'same-tx'"),
              original_id);
    // Offsets stay dense: 1 + n messages, offsets 1..n+1.
    EXPECT_EQ(cluster().run_sql("SELECT format('%s/%s/%s', count(*), min(\"offset\"), max(\"offset\")) "
                                "FROM queen.messages WHERE queue = " + quote(q)),
              "21/1/21");
}

TEST(Fusion, SmallPoolServesManyParkedPopsAndPushes) {
    broker_process small(cluster().conninfo(), {{"DB_POOL_SIZE", "2"}, {"QUEEN_LONGPOLL_RECHECK_MS", "60000"}});
    constexpr int n = 30;
    const std::string prefix = unique_name("pool-park");
    auto queue_of = [&](int i) { return prefix + "-" + std::to_string(i); };

    std::vector<http_reply> replies(n);
    std::vector<steady::time_point> returned(n);
    std::vector<std::string> errors(n);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
        threads.emplace_back([&, i] {
            try {
                auto c = client_of(small);
                replies[i] = pop(c, queue_of(i), "wait=true&timeout=30000");
                returned[i] = steady::now();
            } catch (const std::exception& e) {
                errors[i] = e.what();
            }
        });
    wait_parked(small, n);

    // While 30 pops are parked, the 2-connection pool still serves pushes, one per queue.
    const auto push_start = steady::now();
    auto pusher = client_of(small);
    for (int i = 0; i < n; ++i) {
        auto r = pusher.post("/api/v1/push", json{{"items", json::array({json{{"queue", queue_of(i)},
                                                                              {"payload", "for-" + std::to_string(i)}}})}});
        ASSERT_EQ(r.status, 201) << "push " << i << ": " << r.body;
        EXPECT_EQ(r.json()[0]["status"], "queued");
    }
    // And other requests too.
    EXPECT_EQ(pusher.get("/health").status, 200);
    for (auto& t : threads) t.join();

    for (int i = 0; i < n; ++i) {
        SCOPED_TRACE("parked pop " + std::to_string(i));
        ASSERT_TRUE(errors[i].empty()) << errors[i];
        ASSERT_EQ(replies[i].status, 200) << replies[i].body;
        auto body = replies[i].json();
        ASSERT_EQ(body["messages"].size(), 1u);
        EXPECT_EQ(body["messages"][0]["data"], "for-" + std::to_string(i));
        EXPECT_EQ(body["queue"], queue_of(i));
        // Woken by the push, long before the 30 s long-poll timeout.
        EXPECT_LT(returned[i] - push_start, 20s);
    }
    // Each message is leased to its parked pop (nothing left for anyone else).
    EXPECT_EQ(cluster().run_sql("SELECT count(*) FROM queen.log_consumers c JOIN queen.queues q ON q.id = c.queue_id "
                                "WHERE q.name LIKE " + quote(prefix + "-%") + " AND c.lease_id IS NOT NULL"),
              std::to_string(n));
}
