// Maintenance across a killed broker: a broker killed with a non-empty spool drains it after its
// restart, one killed in the middle of a drain stores each record once, and in-doubt records are
// probed (even with dedup off) and not stored again when they were committed.
//
// Maintenance and the spool (docs/maintenance-and-spool.md). The other files of these suites:
// maintenance_flags, _restart and _outage_test.cpp.
#include "maintenance_support.hpp"
#include "test_env.hpp"
#include "spool/spool_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <future>
#include <string>
#include <vector>

namespace queen::test {
namespace {

using namespace maintenance_support;
using nlohmann::json;
using namespace std::chrono_literals;

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
    // The drainer logs a batch after marking it drained.
    EXPECT_TRUE(wait_until([&] { return b.log().find("1 duplicate(s)") != std::string::npos; }, 10s)) << b.log();
}

}  // namespace
}  // namespace queen::test
