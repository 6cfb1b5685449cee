// Maintenance and the spool (docs/maintenance-and-spool.md): push maintenance buffers pushes
// in the broker's fsync'd spool and drains them in order, exactly once; pop maintenance
// answers 204; every broker obeys the flags; a killed broker drains its spool after a restart;
// a PostgreSQL outage under steady push load loses and doubles nothing.
#include "test_env.hpp"

#include "spool/spool_file.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace queen::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* maintenance_path = "/api/v1/system/maintenance";
constexpr const char* pop_maintenance_path = "/api/v1/system/maintenance/pop";

std::map<std::string, std::string> spool_env(const temp_dir& dir) {
    return {{"QUEEN_SPOOL_DIR", dir.path.string()}};
}

bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) return true;
        std::this_thread::sleep_for(25ms);
    }
    return condition();
}

json get_status(http_client& c, const std::string& path = maintenance_path) {
    auto r = c.get(path);
    if (r.status != 200) throw std::runtime_error("GET " + path + ": " + std::to_string(r.status) + " " + r.body);
    return r.json();
}

json set_flag(http_client& c, const std::string& path, bool enabled) {
    auto r = c.post(path, json{{"enabled", enabled}});
    if (r.status != 200) throw std::runtime_error("POST " + path + ": " + std::to_string(r.status) + " " + r.body);
    return r.json();
}

std::uint64_t buffered(http_client& c) { return get_status(c)["bufferedMessages"].get<std::uint64_t>(); }

json push_items(http_client& c, const json& items) {
    auto r = c.post("/api/v1/push", json{{"items", items}});
    if (r.status != 201) throw std::runtime_error("push: " + std::to_string(r.status) + " " + r.body);
    return r.json();
}

// "partition|transactionId" of every stored message of the queue, by partition then offset.
std::vector<std::string> stored(const test_cluster& db, const std::string& queue) {
    auto text = db.run_sql("SELECT string_agg(partition || '|' || transaction_id, E'\\n' ORDER BY partition, \"offset\") "
                           "FROM queen.messages WHERE queue = '" + queue + "'");
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string line; std::getline(ss, line);)
        if (!line.empty()) out.push_back(line);
    return out;
}

// Offsets of every partition of the queue are 1..n without a gap.
std::string gaps(const test_cluster& db, const std::string& queue) {
    return db.run_sql("SELECT count(*) FROM (SELECT partition, min(\"offset\") AS lo, max(\"offset\") AS hi, count(*) AS n "
                      "FROM queen.messages WHERE queue = '" + queue + "' GROUP BY partition) x "
                      "WHERE lo <> 1 OR hi <> n");
}

std::string segments_of(const test_cluster& db, const std::string& queue) {
    return db.run_sql("SELECT count(*) FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id "
                      "JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = '" + queue + "'");
}

// Pops (and acks) everything of one partition; returns "partition|transactionId" in order,
// and checks that offsets follow each other without a gap.
std::vector<std::string> consume_partition(http_client& c, const std::string& queue, const std::string& partition) {
    std::vector<std::string> out;
    std::int64_t expected = 1;
    for (;;) {
        auto r = pop(c, queue, "batch=500", partition);
        if (r.status == 204) break;
        if (r.status != 200) throw std::runtime_error("pop: " + std::to_string(r.status) + " " + r.body);
        auto body = r.json();
        for (const auto& m : body["messages"]) {
            EXPECT_EQ(m["offset"].get<std::int64_t>(), expected) << queue << "/" << partition;
            expected = m["offset"].get<std::int64_t>() + 1;
            out.push_back(partition + "|" + m["transactionId"].get<std::string>());
        }
        const auto& last = body["messages"].back();
        ack(c, last);
    }
    return out;
}

class Maintenance : public ::testing::Test {
protected:
    static void SetUpTestSuite() { db_ = new test_cluster(); }
    static void TearDownTestSuite() {
        delete db_;
        db_ = nullptr;
    }
    void TearDown() override { db_->run_sql("SELECT queen.set_maintenance(false, false)"); }
    static test_cluster& db() { return *db_; }

    static test_cluster* db_;
};
test_cluster* Maintenance::db_ = nullptr;

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

TEST_F(Maintenance, ABrokerKilledWithANonEmptySpoolDrainsItAfterRestart) {
    temp_dir dir("spool-it");
    broker_process b(db().conninfo(), spool_env(dir));
    auto c = client_of(b);
    const auto q = unique_name("mnt-kill");
    configure_queue(c, q, {{"dedupWindowSeconds", 0}});
    set_flag(c, maintenance_path, true);
    std::vector<std::string> sent;
    for (int r = 0; r < 30; ++r) {
        json items = json::array();
        for (int k = 0; k < 3; ++k) {
            std::string tx = "k" + std::to_string(r) + "-" + std::to_string(k);
            items.push_back({{"queue", q}, {"partition", "p"}, {"transactionId", tx}, {"payload", r}});
            sent.push_back("p|" + tx);
        }
        push_items(c, items);
    }
    b.kill9();
    b.restart();  // maintenance is still on: the spool is recovered, not drained yet
    auto c2 = client_of(b);
    EXPECT_NE(b.log().find("90 record(s) to drain"), std::string::npos) << b.log();
    EXPECT_EQ(buffered(c2), 90u);
    EXPECT_EQ(segments_of(db(), q), "0");
    set_flag(c2, maintenance_path, false);
    ASSERT_TRUE(wait_until([&] { return buffered(c2) == 0; }, 10s)) << get_status(c2);
    EXPECT_EQ(stored(db(), q), sent);
    EXPECT_EQ(gaps(db(), q), "0");
}

TEST_F(Maintenance, ABrokerKilledInTheMiddleOfADrainStoresEachRecordOnce) {
    temp_dir dir("spool-it");
    broker_process b(db().conninfo(), spool_env(dir));
    auto c = client_of(b);
    const auto q0 = unique_name("mnt-middle-w0"), q1 = unique_name("mnt-middle");
    configure_queue(c, q0, {{"dedupWindowSeconds", 0}});
    configure_queue(c, q1, {{"dedupWindowSeconds", 3600}});
    set_flag(c, maintenance_path, true);
    std::map<std::string, std::vector<std::string>> sent;
    for (int r = 0; r < 60; ++r) {
        json items = json::array();
        for (int k = 0; k < 500; ++k) {
            const auto& q = k % 2 ? q0 : q1;
            std::string part = "p" + std::to_string(k % 4);
            std::string tx = "d" + std::to_string(r) + "-" + std::to_string(k);
            items.push_back({{"queue", q}, {"partition", part}, {"transactionId", tx}, {"payload", std::string(100, 'x')}});
            sent[q].push_back(part + "|" + tx);
        }
        push_items(c, items);
    }
    // Kill the broker as soon as its first batch is drained: the next one is in flight.
    set_flag(c, maintenance_path, false);
    ASSERT_TRUE(wait_until([&] { return b.log().find("spool: drained") != std::string::npos; }, 20s)) << b.log();
    b.kill9();
    const auto first_run = b.log().size();
    b.restart();
    auto c2 = client_of(b);
    ASSERT_TRUE(wait_until([&] { return buffered(c2) == 0; }, 60s)) << get_status(c2) << b.log();
    auto second_run = b.log().substr(first_run);
    EXPECT_NE(second_run.find("record(s) to drain"), std::string::npos) << second_run;
    if (second_run.find("interrupted drain") == std::string::npos)
        std::cerr << "note: the kill did not land inside a batch this time\n";
    for (const auto& q : {q0, q1}) {
        auto& expect = sent[q];
        std::stable_sort(expect.begin(), expect.end(), [](const std::string& a, const std::string& b) {
            return a.substr(0, a.find('|')) < b.substr(0, b.find('|'));
        });
        EXPECT_EQ(stored(db(), q), expect) << q;
        EXPECT_EQ(gaps(db(), q), "0");
    }
}

TEST_F(Maintenance, InDoubtItemsAreProbedEvenWithDedupOff) {
    temp_dir dir("spool-it");
    broker_process b(db().conninfo(), spool_env(dir));
    auto c = client_of(b);
    const auto q = unique_name("mnt-probe");
    configure_queue(c, q, {{"dedupWindowSeconds", 0}});
    push_items(c, json::array({{{"queue", q}, {"transactionId", "x1"}, {"payload", 1}}}));
    // x1 in doubt: found, a duplicate with the original's offset; x2 in doubt: stored; x1 not
    // in doubt: stored again (dedup is off for this queue, as for any push).
    auto rows = db().run_sql(
        "SELECT string_agg(item || ':' || status || ':' || msg_offset, ',' ORDER BY item) FROM queen.push_spooled("
        "ARRAY['" + q + "'], ARRAY['Default'], ARRAY[3], ARRAY['x1','x2','x1'], ARRAY[NULL,NULL,NULL]::uuid[], "
        "ARRAY[NULL,NULL,NULL]::text[], ARRAY['1','2','3'], ARRAY[now() - interval '1 hour', now() - interval '1 hour', NULL])");
    EXPECT_EQ(rows, "1:duplicate:1,2:queued:2,3:queued:3");
    // An in-doubt item stored before its probe window is not looked at.
    rows = db().run_sql(
        "SELECT string_agg(item || ':' || status, ',') FROM queen.push_spooled("
        "ARRAY['" + q + "'], ARRAY['Default'], ARRAY[1], ARRAY['x2'], ARRAY[NULL]::uuid[], ARRAY[NULL]::text[], "
        "ARRAY['4'], ARRAY[now() + interval '1 hour'])");
    EXPECT_EQ(rows, "1:queued");
}

TEST_F(Maintenance, AnInDoubtSpoolRecordThatWasCommittedIsNotStoredAgain) {
    // What a push whose connection broke after its commit leaves behind: the message is
    // stored, and the same item is in the spool marked in doubt. Window 0: dedup is off.
    temp_dir dir("spool-it");
    broker_process b(db().conninfo(), spool_env(dir));
    auto c = client_of(b);
    const auto q = unique_name("mnt-doubt");
    configure_queue(c, q, {{"dedupWindowSeconds", 0}});
    push_items(c, json::array({{{"queue", q}, {"partition", "p"}, {"transactionId", "y1"}, {"payload", 1}}}));
    c.close();
    b.terminate();
    {
        spool::spool_file sf(spool::spool_options{dir.path, b.port(),
                                                  db().run_sql("SELECT database_id FROM queen.maintenance_settings"), 0});
        auto now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
        std::vector<spool::record> records;
        for (const char* tx : {"y1", "y2"}) {
            spool::record r;
            r.item.queue = q;
            r.item.partition = "p";
            r.item.transaction_id = tx;
            r.item.payload = "1";
            r.accepted_at_us = now_us - 2'000'000;
            r.in_doubt = true;
            records.push_back(r);
        }
        std::promise<std::exception_ptr> done;
        sf.append(std::move(records), [&done](std::exception_ptr e) { done.set_value(e); });
        ASSERT_EQ(done.get_future().get(), nullptr);
    }
    b.restart();
    auto c2 = client_of(b);
    ASSERT_TRUE(wait_until([&] { return buffered(c2) == 0; }, 10s)) << get_status(c2) << b.log();
    EXPECT_EQ(stored(db(), q), (std::vector<std::string>{"p|y1", "p|y2"}));
    EXPECT_NE(b.log().find("1 duplicate(s)"), std::string::npos) << b.log();
}

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
