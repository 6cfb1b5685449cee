// StreamsEndToEnd, a running aggregate whose broker is SIGKILLed between and during cycles (after
// a pop, with a pop in flight, mid-cycle with the orphan committing or rolled back, right after
// sending), compared with a crash-free run of the same input: nothing lost or doubled.
//
// Streams end to end: a small client that follows the streaming SDK's protocol
// (streams_e2e_support.hpp) runs real pipelines against the broker. The other file of the suite:
// streams_e2e_window_test.cpp, streams_e2e_kill9_test.cpp.
#include "streams_e2e_support.hpp"
#include "test_cluster.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

using namespace streams_e2e_support;
using nlohmann::json;
using namespace std::chrono_literals;

// ---- 2. A running aggregate under SIGKILL ----

// One batch of the running aggregate: per key a {count, sum} in state, and one sink push per
// source message (without transactionId: derived from the acked offset and its position).
cycle_ops aggregate(stream_client& c, const batch& b) {
    json keys = json::array();
    for (const auto& m : b.messages) keys.push_back(m["data"]["key"]);
    auto stored = by_key(c.state(b.partition_id, {{"keys", keys}}));
    std::map<std::string, json> changed;
    cycle_ops ops;
    for (const auto& m : b.messages) {
        const std::string key = m["data"]["key"];
        auto it = changed.find(key);
        if (it == changed.end())
            it = changed.emplace(key, stored.count(key) ? stored[key] : json{{"count", 0}, {"sum", 0}}).first;
        json& agg = it->second;
        agg["count"] = agg["count"].get<long long>() + 1;
        agg["sum"] = agg["sum"].get<long long>() + m["data"]["v"].get<long long>();
        ops.push_items.push_back({{"queue", c.sink()},
                                  {"partition", b.partition},
                                  {"payload",
                                   {{"partition", b.partition},
                                    {"n", m["data"]["n"]},
                                    {"key", key},
                                    {"count", agg["count"]},
                                    {"sum", agg["sum"]}}}});
    }
    for (const auto& [k, v] : changed) ops.state_ops.push_back(upsert(k, v));
    return ops;
}

// A transaction of the test that holds a row lock until commit() (or its destruction).
class row_lock {
public:
    row_lock(const test_cluster& db, const std::string& select_for_update)
        : conn_(PQconnectdb(db.conninfo().c_str()), &PQfinish) {
        if (PQstatus(conn_.get()) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(conn_.get()));
        exec("BEGIN");
        exec(select_for_update);
    }
    void commit() { exec("COMMIT"); }

private:
    void exec(const std::string& sql) {
        std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(conn_.get(), sql.c_str()), &PQclear);
        const auto st = PQresultStatus(r.get());
        if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
            throw std::runtime_error(sql + ": " + PQerrorMessage(conn_.get()));
    }
    std::unique_ptr<PGconn, decltype(&PQfinish)> conn_;
};

long long committed_of(const std::string& partition_id, const std::string& group) {
    return sql_int(cluster(), "SELECT committed FROM queen.log_consumers WHERE partition_id = " + partition_id +
                                  " AND consumer_group = " + quote(group) + " ORDER BY version DESC LIMIT 1");
}

// Sends `target` from another thread on its own connection and SIGKILLs the broker right
// after the request went out. The answer, if any came, is lost.
void kill_after_sending(broker_process& b, const std::string& method, const std::string& target,
                        const std::string& body) {
    std::atomic<bool> sending{false};
    std::thread sender([&] {
        try {
            http_client conn("127.0.0.1", b.port());
            sending = true;
            conn.request(method, target, body);
        } catch (const std::exception&) {
            sending = true;  // the broker died under it: expected
        }
    });
    while (!sending) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(2ms);
    b.kill9();
    sender.join();
}

// Restarts a killed broker from another thread a moment later, so that the client's next
// requests meet a dead broker (connection refused) and are retried.
class background_restart {
public:
    explicit background_restart(broker_process& b) : b_(b) {}
    ~background_restart() { join(); }
    void start() {
        join();
        thread_ = std::thread([this] {
            std::this_thread::sleep_for(300ms);
            try {
                b_.restart();
            } catch (const std::exception& e) {
                error_ = e.what();
            }
        });
    }
    void join() {
        if (thread_.joinable()) thread_.join();
        if (!error_.empty()) ADD_FAILURE() << "restart: " << error_;
        error_.clear();
    }

private:
    broker_process& b_;
    std::thread thread_;
    std::string error_;
};

// Sends a cycle from another thread while the test holds the query's row, so the cycle waits
// inside PostgreSQL; SIGKILLs the broker then. The orphaned cycle then either runs to its end
// (let_it_run: it commits with nobody to answer) or has its backend terminated (it rolls back).
// Restarts the broker; whether the orphan committed (the source cursor reached the ack).
bool kill_mid_cycle(broker_process& b, const std::string& query_id, const std::string& group, const json& body,
                    bool let_it_run) {
    row_lock lock(cluster(), "SELECT 1 FROM queen.stream_queries WHERE id = " + quote(query_id) + " FOR UPDATE");
    const std::string pid = body["partition_id"];
    const long long before = committed_of(pid, group);
    std::thread sender([&] {
        try {
            http_client("127.0.0.1", b.port()).post("/streams/v1/cycle", body);
        } catch (const std::exception&) {
        }
    });
    std::string orphan;
    const bool waiting = eventually([&] {
        orphan = cluster().run_sql(
            "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND query LIKE 'SELECT queen.stream_cycle(%'");
        return !orphan.empty();
    });
    EXPECT_TRUE(waiting) << "the cycle never waited for the query's row";
    b.kill9();
    sender.join();
    if (waiting && !let_it_run) cluster().run_sql("SELECT pg_terminate_backend(" + orphan + ")");
    lock.commit();
    if (waiting) {
        EXPECT_TRUE(eventually([&] {
            return cluster().run_sql("SELECT count(*) FROM pg_stat_activity WHERE pid = " + orphan) == "0";
        })) << "the orphaned cycle's backend lives on";
    }
    const bool committed = committed_of(pid, group) != before;
    if (!let_it_run) {
        EXPECT_FALSE(committed) << "a terminated cycle committed";
    }
    b.restart();
    return committed;
}

// The expected running aggregate of the input: sink payloads and final state per partition.
struct aggregate_input {
    std::vector<std::pair<std::string, json>> items;
    std::vector<json> sink;                                    // sorted by JSON text
    std::map<std::string, std::map<std::string, json>> state;  // partition name → key → value
};

aggregate_input make_aggregate_input(int partitions, int per_partition) {
    aggregate_input in;
    for (int m = 0; m < per_partition; ++m)
        for (int p = 0; p < partitions; ++p) {
            const auto part = partition_name(p);
            const std::string key = std::string(1, static_cast<char>('a' + (m * 7 + p) % 3));
            const long long v = (p * 31 + m * 17) % 100;
            in.items.push_back({part, {{"n", m}, {"key", key}, {"v", v}}});
            auto& agg = in.state[part][key];
            if (agg.is_null()) agg = {{"count", 0}, {"sum", 0}};
            agg["count"] = agg["count"].get<long long>() + 1;
            agg["sum"] = agg["sum"].get<long long>() + v;
            in.sink.push_back(
                {{"partition", part}, {"n", m}, {"key", key}, {"count", agg["count"]}, {"sum", agg["sum"]}});
        }
    std::sort(in.sink.begin(), in.sink.end(), [](const json& a, const json& b) { return a.dump() < b.dump(); });
    return in;
}

// The state of every lane of a query: partition id → key → value.
std::map<std::string, std::map<std::string, json>> all_state(stream_client& c, const std::vector<std::string>& lanes) {
    std::map<std::string, std::map<std::string, json>> out;
    for (const auto& pid : lanes) out[pid] = by_key(c.state(pid));
    return out;
}

TEST(StreamsEndToEnd, Kill9BetweenAndDuringCyclesLosesAndDoublesNothing) {
    constexpr int partitions = 20, per_partition = 50;
    const auto source = unique_name("agg-src");
    const auto crash_sink = unique_name("agg-sink-crash"), calm_sink = unique_name("agg-sink-calm");
    const auto input = make_aggregate_input(partitions, per_partition);
    {
        auto c = client();
        configure_queue(c, source, {{"leaseTime", 5}, {"retryLimit", 100}});
        push_all(c, source, input.items);
    }
    const auto lanes = source_partition_ids(source);
    ASSERT_EQ(lanes.size(), static_cast<std::size_t>(partitions));

    // The crash run, on a broker of its own, killed at these cycles: between two cycles, after
    // a pop answered, while a pop is in flight, in the middle of a cycle whose orphan then
    // commits (its ack without and with the lease id), or rolls back, and right after sending.
    broker_process b(cluster().conninfo());
    background_restart restarter(b);
    stream_client crash(b.port(), unique_name("agg-crash"), source, crash_sink, 10);
    crash.register_query();
    crash.with_lease = [](int n) { return n % 2 == 1; };
    std::vector<std::string> kills;
    std::set<int> fired;  // each crash point once (a pop that finds nothing keeps n)
    const auto once = [&](int n, std::initializer_list<int> at) {
        return std::find(at.begin(), at.end(), n) != at.end() && fired.insert(n).second;
    };
    int orphan_commits = 0;
    crash.after_cycle = [&](int n) {
        if (!once(n, {3})) return;
        kills.push_back("between cycles");
        restarter.join();
        b.kill9();
        restarter.start();
    };
    crash.after_pop = [&](int n) {
        if (!once(n, {7})) return;
        kills.push_back("after a pop answered");
        restarter.join();
        b.kill9();
        restarter.start();
    };
    crash.before_pop = [&](int n) {
        if (!once(n, {11})) return;
        kills.push_back("pop in flight");
        restarter.join();
        kill_after_sending(b, "GET",
                           "/api/v1/pop/queue/" + url_encode(source) + "?consumerGroup=" + url_encode(crash.group()) +
                               "&batch=10&wait=false",
                           "");
        restarter.start();
    };
    crash.lose_cycle = [&](int n, const json& body) {
        if (once(n, {16, 21, 26})) {
            const bool run_on = n != 26;
            restarter.join();
            kills.push_back(std::string("mid-cycle, orphan ") + (run_on ? "runs on" : "terminated") +
                            (body["ack"].contains("leaseId") ? ", ack with lease" : ", ack without lease"));
            orphan_commits += kill_mid_cycle(b, crash.query_id(), crash.group(), body, run_on) ? 1 : 0;
            return true;
        }
        if (once(n, {31, 36})) {
            kills.push_back("right after sending a cycle");
            restarter.join();
            kill_after_sending(b, "POST", "/streams/v1/cycle", body.dump());
            restarter.start();
            return true;
        }
        return false;
    };
    const auto crash_done = [&] { return uncommitted_partitions(source, crash.group()) == 0; };
    ASSERT_TRUE(crash.run(aggregate, crash_done, 50s)) << crash.stats();
    restarter.join();
    EXPECT_EQ(kills.size(), 8u);

    // The crash-free run of the same input, on the shared broker.
    stream_client calm(broker().port(), unique_name("agg-calm"), source, calm_sink, 7);
    calm.register_query();
    const auto calm_done = [&] { return uncommitted_partitions(source, calm.group()) == 0; };
    ASSERT_TRUE(calm.run(aggregate, calm_done, 30s)) << calm.stats();
    EXPECT_EQ(calm.stats().cycles_failed, 0) << calm.stats();

    // Same state and same sink multiset, equal to the input's aggregate: nothing lost or doubled.
    const auto crash_state = all_state(crash, lanes), calm_state = all_state(calm, lanes);
    EXPECT_TRUE(crash_state == calm_state) << "the final states differ";
    for (const auto& pid : lanes) {
        const auto part = cluster().run_sql("SELECT name FROM queen.log_partitions WHERE id = " + pid);
        EXPECT_TRUE(calm_state.at(pid) == input.state.at(part)) << "partition " << part;
    }
    const auto crash_sunk = payloads_of(crash_sink), calm_sunk = payloads_of(calm_sink);
    EXPECT_EQ(crash_sunk.size(), input.sink.size());
    EXPECT_TRUE(crash_sunk == calm_sunk) << "the sinks differ";
    EXPECT_TRUE(calm_sunk == input.sink) << "the crash-free sink differs from the input's aggregate";
    EXPECT_EQ(uncommitted_partitions(source, crash.group()), 0);
    EXPECT_EQ(uncommitted_partitions(source, calm.group()), 0);
    EXPECT_EQ(sql_int(cluster(),
                      "SELECT count(*) FROM queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id "
                      "WHERE q.name = " +
                          quote(source)),
              0);
    // The orphan of the lease-less ack committed with nobody to answer; its retry was then
    // answered success with nothing applied (a replay: its ack a noop).
    EXPECT_GE(orphan_commits, 1);
    EXPECT_GT(crash.stats().replays, 0) << crash.stats();
    EXPECT_GT(crash.stats().network_retries, 0) << crash.stats();
    std::cout << "[ crash run ] kills:";
    for (const auto& k : kills) std::cout << "\n  " << k;
    std::cout << "\n  orphans committed: " << orphan_commits << "\n  " << crash.stats() << "\n[ calm run ] "
              << calm.stats() << "\n";
}

}  // namespace
}  // namespace queen::test
