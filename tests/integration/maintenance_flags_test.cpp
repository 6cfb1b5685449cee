// Maintenance, the flags: bodies without a boolean enabled are 400; push maintenance buffers
// pushes in the broker's fsync'd spool and drains them in order, exactly once; a full spool
// answers 503 and keeps nothing of that push; pop maintenance answers 204; a second broker on the
// same database obeys the flags.
//
// Maintenance and the spool (docs/maintenance-and-spool.md). The other files of these suites:
// maintenance_flags, _restart and _outage_test.cpp.
#include "maintenance_support.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace queen::test {
namespace {

namespace fs = std::filesystem;
using namespace maintenance_support;
using nlohmann::json;
using namespace std::chrono_literals;

TEST_F(Maintenance, BodiesWithoutABooleanEnabledAre400AndStatusHasNumbers) {
    temp_dir dir("spool-it");
    broker_process b(db().conninfo(), spool_env(dir));
    auto c = client_of(b);
    for (const char* path : {maintenance_path, pop_maintenance_path}) {
        for (const char* body : {"{}", R"({"enabled":"yes"})", R"({"enabled":1})", R"({"enabled":null})", "[true]",
                                 "not json"}) {
            auto r = c.post(path, std::string(body));
            EXPECT_EQ(r.status, 400) << path << " " << body << " " << r.body;
            EXPECT_TRUE(r.json()["error"].is_string());
        }
    }
    auto s = get_status(c);
    EXPECT_EQ(s["maintenanceMode"], false);
    EXPECT_EQ(s["popMaintenanceMode"], false);
    EXPECT_TRUE(s["bufferedMessages"].is_number_unsigned()) << s;
    EXPECT_EQ(s["bufferedMessages"], 0);
    EXPECT_EQ(s["bufferHealthy"], true);
    EXPECT_EQ(c.del(maintenance_path).status, 405);
}

TEST_F(Maintenance, PushMaintenanceBuffersAndThenDrainsInOrderExactlyOnce) {
    temp_dir dir("spool-it");
    broker_process b(db().conninfo(), spool_env(dir));
    auto c = client_of(b);
    const auto off = unique_name("mnt-w0"), on = unique_name("mnt-w3600");
    configure_queue(c, off, {{"dedupWindowSeconds", 0}});
    configure_queue(c, on, {{"dedupWindowSeconds", 3600}});

    auto s = set_flag(c, maintenance_path, true);
    EXPECT_EQ(s["maintenanceMode"], true);

    std::map<std::string, std::vector<std::string>> sent;  // queue -> "partition|txid" in push order
    std::size_t total = 0;
    for (int r = 0; r < 40; ++r) {
        json items = json::array();
        for (int k = 0; k < 5; ++k) {
            const auto& q = (r + k) % 2 ? off : on;
            std::string part = "p" + std::to_string((r * 5 + k) % 3);
            std::string tx = "t" + std::to_string(r) + "-" + std::to_string(k);
            items.push_back({{"queue", q}, {"partition", part}, {"transactionId", tx}, {"payload", {{"r", r}, {"k", k}}},
                             {"traceId", "0191d3c4-5b6a-7c8d-9e0f-112233445566"}});
            sent[q].push_back(part + "|" + tx);
        }
        auto answer = push_items(c, items);
        ASSERT_EQ(answer.size(), 5u);
        for (std::size_t k = 0; k < 5; ++k) {
            EXPECT_EQ(answer[k]["index"], k);
            EXPECT_EQ(answer[k]["status"], "buffered") << answer[k];
            EXPECT_EQ(answer[k]["transaction_id"], items[k]["transactionId"]);
            EXPECT_EQ(answer[k]["queueName"], items[k]["queue"]);
            EXPECT_TRUE(answer[k]["message_id"].is_null());
            EXPECT_EQ(answer[k]["trace_id"], "0191d3c4-5b6a-7c8d-9e0f-112233445566");
        }
        total += 5;
    }
    // A retry of an item already spooled, in the queue with a dedup window: stored once.
    auto again = push_items(c, json::array({{{"queue", on}, {"partition", "p0"}, {"transactionId", "t0-0"},
                                             {"payload", "retry"}}}));
    EXPECT_EQ(again[0]["status"], "buffered");
    ++total;
    // Items without a transactionId get one before they are spooled.
    auto generated = push_items(c, json::array({{{"queue", off}, {"partition", "p9"}, {"payload", 1}}}));
    ASSERT_TRUE(generated[0]["transaction_id"].is_string());
    sent[off].push_back("p9|" + generated[0]["transaction_id"].get<std::string>());
    ++total;

    EXPECT_EQ(segments_of(db(), off), "0");
    EXPECT_EQ(segments_of(db(), on), "0");
    EXPECT_EQ(buffered(c), total);
    EXPECT_TRUE(fs::exists(dir.path / ("queen-" + std::to_string(b.port()) + ".spool")));
    EXPECT_EQ(pop(c, off).status, 204);
    // A transaction that pushes would overtake the spool: 503, Retry-After.
    auto tx = c.post("/api/v1/transaction",
                     json{{"operations", json::array({{{"type", "push"}, {"items", {{{"queue", on}, {"payload", 1}}}}}})}});
    EXPECT_EQ(tx.status, 503) << tx.body;
    EXPECT_EQ(tx.headers["retry-after"], "1");

    s = set_flag(c, maintenance_path, false);
    EXPECT_EQ(s["maintenanceMode"], false);
    ASSERT_TRUE(wait_until([&] { return buffered(c) == 0; }, 15s)) << get_status(c);
    EXPECT_FALSE(fs::exists(dir.path / ("queen-" + std::to_string(b.port()) + ".spool")));

    for (const auto& q : {off, on}) {
        auto& expect = sent[q];
        std::stable_sort(expect.begin(), expect.end(), [](const std::string& a, const std::string& b) {
            return a.substr(0, a.find('|')) < b.substr(0, b.find('|'));
        });
        EXPECT_EQ(stored(db(), q), expect) << q;
        EXPECT_EQ(gaps(db(), q), "0");
        std::vector<std::string> consumed;
        for (const char* part : {"p0", "p1", "p2", "p9"}) {
            auto got = consume_partition(c, q, part);
            consumed.insert(consumed.end(), got.begin(), got.end());
        }
        EXPECT_EQ(consumed, expect) << q;
    }
    // After the drain pushes go straight to PostgreSQL again.
    auto direct = push_items(c, json::array({{{"queue", on}, {"payload", "after"}}}));
    EXPECT_EQ(direct[0]["status"], "queued");
}

TEST_F(Maintenance, AFullSpoolAnswers503AndKeepsNothingOfThatPush) {
    temp_dir dir("spool-it");
    auto env = spool_env(dir);
    env["QUEEN_SPOOL_MAX_BYTES"] = "4096";
    broker_process b(db().conninfo(), env);
    auto c = client_of(b);
    const auto q = unique_name("mnt-full");
    set_flag(c, maintenance_path, true);
    int accepted = 0;
    http_reply refused;
    for (int i = 0; i < 100; ++i) {
        auto r = c.post("/api/v1/push", json{{"items", json::array({{{"queue", q}, {"transactionId", "f" + std::to_string(i)},
                                                                     {"payload", std::string(300, 'x')}}})}});
        if (r.status != 201) {
            refused = r;
            break;
        }
        ++accepted;
    }
    ASSERT_EQ(refused.status, 503) << refused.body;
    EXPECT_EQ(refused.headers["retry-after"], "1");
    EXPECT_EQ(refused.json()["error"].get<std::string>().find("/"), std::string::npos) << "no paths in answers";
    EXPECT_GT(accepted, 0);
    EXPECT_EQ(buffered(c), static_cast<std::uint64_t>(accepted));
    EXPECT_EQ(get_status(c)["bufferHealthy"], true);  // full is not broken
    set_flag(c, maintenance_path, false);
    ASSERT_TRUE(wait_until([&] { return buffered(c) == 0; }, 10s));
    EXPECT_EQ(db().run_sql("SELECT count(*) FROM queen.messages WHERE queue = '" + q + "'"), std::to_string(accepted));
}

TEST_F(Maintenance, PopMaintenanceAnswers204WhileMessagesExist) {
    temp_dir dir("spool-it");
    broker_process b(db().conninfo(), spool_env(dir));
    auto c = client_of(b);
    const auto q = unique_name("mnt-pop");
    push_payloads(c, q, "", {json(1), json(2), json(3)});

    auto s = set_flag(c, pop_maintenance_path, true);
    EXPECT_EQ(s["popMaintenanceMode"], true);
    EXPECT_EQ(s["maintenanceMode"], false);
    EXPECT_EQ(get_status(c, pop_maintenance_path)["popMaintenanceMode"], true);
    auto r = pop(c, q);
    EXPECT_EQ(r.status, 204);
    EXPECT_TRUE(r.body.empty());
    EXPECT_EQ(pop(c, q, "", "Default").status, 204);
    auto started = std::chrono::steady_clock::now();
    EXPECT_EQ(pop(c, q, "wait=true&timeout=600").status, 204);
    EXPECT_GE(std::chrono::steady_clock::now() - started, 500ms);
    // Pushes still work during pop maintenance.
    push_payloads(c, q, "", {json(4)});
    EXPECT_EQ(db().run_sql("SELECT count(*) FROM queen.messages WHERE queue = '" + q + "'"), "4");

    // A long-poll parked during pop maintenance is served as soon as it ends.
    std::thread off([&] {
        std::this_thread::sleep_for(400ms);
        auto admin = client_of(b);
        set_flag(admin, pop_maintenance_path, false);
    });
    started = std::chrono::steady_clock::now();
    auto waited = pop(c, q, "wait=true&timeout=10000&batch=10");
    off.join();
    EXPECT_EQ(waited.status, 200) << waited.body;
    EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
    if (waited.status == 200) {
        EXPECT_EQ(waited.json()["messages"].size(), 4u);
    }
}

TEST_F(Maintenance, ASecondBrokerOnTheSameDatabaseObeysTheFlags) {
    temp_dir dir_a("spool-it"), dir_b("spool-it");
    broker_process a(db().conninfo(), spool_env(dir_a));
    broker_process b(db().conninfo(), spool_env(dir_b));
    auto ca = client_of(a), cb = client_of(b);
    const auto q = unique_name("mnt-two");
    push_payloads(cb, q, "", {json(0)});

    set_flag(ca, maintenance_path, true);
    // Every broker follows within its refresh bound (1 s), normally at once through NOTIFY.
    ASSERT_TRUE(wait_until([&] { return get_status(cb)["maintenanceMode"] == true; }, 2500ms));
    auto answer = push_items(cb, json::array({{{"queue", q}, {"transactionId", "b-1"}, {"payload", 1}},
                                               {{"queue", q}, {"transactionId", "b-2"}, {"payload", 2}}}));
    EXPECT_EQ(answer[0]["status"], "buffered");
    EXPECT_EQ(buffered(cb), 2u);
    EXPECT_EQ(buffered(ca), 0u);  // the spool is per broker
    EXPECT_EQ(db().run_sql("SELECT count(*) FROM queen.messages WHERE queue = '" + q + "'"), "1");

    set_flag(cb, pop_maintenance_path, true);
    ASSERT_TRUE(wait_until([&] { return get_status(ca)["popMaintenanceMode"] == true; }, 2500ms));
    EXPECT_EQ(pop(ca, q).status, 204);

    // Turned off on A: B drains its own spool.
    set_flag(ca, maintenance_path, false);
    set_flag(ca, pop_maintenance_path, false);
    ASSERT_TRUE(wait_until([&] { return buffered(cb) == 0; }, 5s)) << get_status(cb);
    EXPECT_EQ(db().run_sql("SELECT string_agg(transaction_id, ',' ORDER BY \"offset\") FROM queen.messages "
                           "WHERE queue = '" + q + "' AND \"offset\" > 1"),
              "b-1,b-2");
    ASSERT_TRUE(wait_until([&] { return get_status(cb)["popMaintenanceMode"] == false; }, 2500ms));
    auto r = pop(cb, q, "batch=10");
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.json()["messages"].size(), 3u);
}

}  // namespace
}  // namespace queen::test
