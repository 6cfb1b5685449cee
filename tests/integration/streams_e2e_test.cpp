// Streams end to end: a small client that follows the streaming SDK's protocol (register, then
// pop a batch with group streams.<name> → read state → one cycle with the state ops, the sink
// pushes and the ack of the batch's last message) runs real pipelines against the broker: a
// windowed count over 100 partitions, and a running aggregate whose broker is SIGKILLed
// between and during cycles, compared with a crash-free run of the same input.
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// A popped batch: one source partition's messages under one lease.
struct batch {
    std::string partition_id;
    std::string partition;
    json messages;
};

// What a batch turns into: the state ops and the sink pushes of its cycle.
struct cycle_ops {
    json state_ops = json::array();
    json push_items = json::array();
};

json upsert(const std::string& key, const json& value) {
    return {{"type", "upsert"}, {"key", key}, {"value", value}};
}
json erase(const std::string& key) {
    return {{"type", "delete"}, {"key", key}};
}

std::map<std::string, json> by_key(const json& rows) {
    std::map<std::string, json> out;
    for (const auto& r : rows) out[r["key"].get<std::string>()] = r["value"];
    return out;
}

// The SDK's side of the stream routes, over one keep-alive connection. A request that fails on
// the network (or answers 5xx, 408 or 429) is sent again, the same body, over a new connection,
// up to a few times. A cycle answered success:false is abandoned: the next pop decides what
// comes next. The hooks let a test crash the broker at chosen points; `n` is the number the
// next cycle body will have.
class stream_client {
public:
    using compute_fn = std::function<cycle_ops(stream_client&, const batch&)>;

    struct counters {
        int pops = 0, cycles_ok = 0, cycles_failed = 0, network_retries = 0, duplicate_pushes = 0,
            replays = 0;
        std::map<std::string, int> failures;  // error text of the cycles answered success:false
    };

    std::function<void(int n)> before_pop, after_pop, after_cycle;
    // Takes over the first send of cycle n; true when it sent it and the answer was lost.
    std::function<bool(int n, const json& body)> lose_cycle;
    std::function<bool(int n)> with_lease = [](int) { return true; };  // whether the ack names its lease

    stream_client(unsigned short port, std::string name, std::string source, std::string sink, int batch_size)
        : port_(port),
          name_(std::move(name)),
          source_(std::move(source)),
          sink_(std::move(sink)),
          batch_size_(batch_size) {}

    const std::string& query_id() const { return query_id_; }
    std::string group() const { return "streams." + name_; }
    const std::string& sink() const { return sink_; }
    const counters& stats() const { return stats_; }
    int next_cycle() const { return cycles_sent_ + 1; }

    void register_query() {
        const auto r = request(
            "POST", "/streams/v1/queries",
            json{{"name", name_}, {"source_queue", source_}, {"sink_queue", sink_}, {"config_hash", "e2e-v1"}}.dump());
        if (r.status != 200 || !r.json().value("success", false))
            throw std::runtime_error("register: " + std::to_string(r.status) + " " + r.body);
        query_id_ = r.json()["query_id"].get<std::string>();
    }

    // POST /streams/v1/state/get of one lane; `filter` adds keys, key_prefix, ripe_at_or_before.
    json state(const std::string& partition_id, json filter = json::object()) {
        filter["query_id"] = query_id_;
        filter["partition_id"] = partition_id;
        const auto r = request("POST", "/streams/v1/state/get", filter.dump());
        if (r.status != 200 || !r.json().value("success", false))
            throw std::runtime_error("state/get: " + std::to_string(r.status) + " " + r.body);
        return r.json()["rows"];
    }

    // One turn of the loop: pop, compute, one cycle that acks the batch's last message. The
    // number of messages popped (0: the pop answered 204).
    std::size_t step(const compute_fn& compute) {
        const int n = next_cycle();
        if (before_pop) before_pop(n);
        const auto r = request("GET",
                               "/api/v1/pop/queue/" + url_encode(source_) + "?consumerGroup=" + url_encode(group()) +
                                   "&batch=" + std::to_string(batch_size_) + "&wait=false",
                               "");
        if (r.status == 204) return 0;
        if (r.status != 200) throw std::runtime_error("pop: " + std::to_string(r.status) + " " + r.body);
        const json answer = r.json();
        batch b{answer["partitionId"].get<std::string>(), answer["partition"].get<std::string>(), answer["messages"]};
        if (b.messages.empty()) return 0;
        ++stats_.pops;
        if (after_pop) after_pop(n);
        const cycle_ops ops = compute(*this, b);
        json ack{{"transactionId", b.messages.back()["transactionId"]}};
        if (with_lease(n)) ack["leaseId"] = b.messages.back()["leaseId"];
        cycle(json{{"query_id", query_id_},
                   {"partition_id", b.partition_id},
                   {"consumer_group", group()},
                   {"state_ops", ops.state_ops},
                   {"push_items", ops.push_items},
                   {"ack", ack},
                   {"release_lease", true}});
        if (after_cycle) after_cycle(n);
        return b.messages.size();
    }

    // Loops until done() holds once a pop finds nothing, within `limit`; whether it did.
    bool run(const compute_fn& compute, const std::function<bool()>& done, std::chrono::seconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < deadline) {
            if (step(compute) > 0) continue;
            if (done()) return true;
            std::this_thread::sleep_for(100ms);  // leases of a dead broker's pops live on
        }
        return done();
    }

    // A cycle without an ack (a final flush of a lane); its success.
    bool flush(const std::string& partition_id, const cycle_ops& ops) {
        return cycle(json{{"query_id", query_id_},
                          {"partition_id", partition_id},
                          {"consumer_group", group()},
                          {"state_ops", ops.state_ops},
                          {"push_items", ops.push_items},
                          {"ack", nullptr}});
    }

private:
    http_reply request(const std::string& method, const std::string& target, const std::string& body) {
        for (int attempt = 0;; ++attempt) {
            if (attempt > 0) {
                ++stats_.network_retries;
                std::this_thread::sleep_for(attempt * 200ms);
            }
            try {
                if (!conn_) conn_ = std::make_unique<http_client>("127.0.0.1", port_);
                auto r = conn_->request(method, target, body);
                const bool retryable = r.status >= 500 || r.status == 408 || r.status == 429;
                if (!retryable || attempt >= 5) return r;
            } catch (const std::exception& e) {
                conn_.reset();
                if (attempt >= 5) throw std::runtime_error(method + " " + target + ": " + e.what());
            }
        }
    }

    // Sends one cycle body (again after a network failure); its success.
    bool cycle(const json& body) {
        const int n = ++cycles_sent_;
        if (lose_cycle && lose_cycle(n, body)) {  // lost on the network: reconnect, send it again
            ++stats_.network_retries;
            conn_.reset();
        }
        const auto r = request("POST", "/streams/v1/cycle", body.dump());
        if (r.status != 200) throw std::runtime_error("cycle: " + std::to_string(r.status) + " " + r.body);
        const json answer = r.json();
        if (!answer.value("success", false)) {
            ++stats_.cycles_failed;
            ++stats_.failures[answer.value("error", std::string("?"))];
            return false;
        }
        ++stats_.cycles_ok;
        if (!answer.value("applied", true)) ++stats_.replays;
        for (const auto& p : answer["push_results"])
            if (p.value("status", std::string()) == "duplicate") ++stats_.duplicate_pushes;
        return true;
    }

    unsigned short port_;
    std::string name_, source_, sink_;
    int batch_size_;
    std::string query_id_;
    std::unique_ptr<http_client> conn_;
    int cycles_sent_ = 0;
    counters stats_;
};

std::ostream& operator<<(std::ostream& os, const stream_client::counters& s) {
    os << "pops " << s.pops << ", cycles ok " << s.cycles_ok << ", failed " << s.cycles_failed << ", network retries "
       << s.network_retries << ", duplicate pushes " << s.duplicate_pushes << ", replays " << s.replays;
    for (const auto& [error, count] : s.failures) os << "\n  failed x" << count << ": " << error;
    return os;
}

// Source partitions (those holding messages) whose cursor for `group` is not at their head.
long long uncommitted_partitions(const std::string& queue, const std::string& group) {
    return sql_int(
        cluster(),
        "SELECT count(*) FROM (SELECT partition_id, max(\"offset\") AS head FROM queen.messages WHERE queue = " +
            quote(queue) +
            " GROUP BY partition_id) m LEFT JOIN LATERAL (SELECT lc.committed FROM "
            "queen.log_consumers lc WHERE lc.partition_id = m.partition_id AND lc.consumer_group = " +
            quote(group) + " ORDER BY lc.version DESC LIMIT 1) c ON true WHERE coalesce(c.committed, 0) <> m.head");
}

std::vector<std::string> source_partition_ids(const std::string& queue) {
    const auto text = cluster().run_sql(
        "SELECT string_agg(partition_id::text, ',' ORDER BY partition_id) FROM (SELECT DISTINCT partition_id FROM "
        "queen.messages WHERE queue = " +
        quote(queue) + ") p");
    std::vector<std::string> out;
    for (std::size_t at = 0; at < text.size();) {
        const auto comma = std::min(text.find(',', at), text.size());
        out.push_back(text.substr(at, comma - at));
        at = comma + 1;
    }
    return out;
}

// The payloads a queue holds, sorted by their JSON text (a multiset).
std::vector<json> payloads_of(const std::string& queue) {
    const auto all = json::parse(cluster().run_sql(
        "SELECT coalesce(jsonb_agg(payload), '[]'::jsonb)::text FROM queen.messages WHERE queue = " + quote(queue)));
    std::vector<json> out(all.begin(), all.end());
    std::sort(out.begin(), out.end(), [](const json& a, const json& b) { return a.dump() < b.dump(); });
    return out;
}

void push_all(http_client& c, const std::string& queue, const std::vector<std::pair<std::string, json>>& items) {
    for (std::size_t at = 0; at < items.size(); at += 500) {
        json body = json::array();
        for (std::size_t i = at; i < std::min(items.size(), at + 500); ++i)
            body.push_back({{"queue", queue}, {"partition", items[i].first}, {"payload", items[i].second}});
        const auto r = c.post("/api/v1/push", json{{"items", body}});
        ASSERT_EQ(r.status, 201) << r.body;
    }
}

std::string partition_name(int p) {
    return (p < 10 ? "p0" : "p") + std::to_string(p);
}

// ---- 1. A windowed count: tumbling windows per key, emitted once ripe ----

constexpr long long window_ms = 1000, lateness_ms = 500;
constexpr long long base_ts = 1'700'000'000'000;  // a multiple of window_ms
const std::string watermark_key = "~maxTs";       // the lane's max event time (no windowEnd: never ripe)

std::string window_key(const std::string& key, long long start) {
    return key + "|" + std::to_string(start);
}

// Emits the windows in `ripe` (state key → value) to the sink and deletes their state.
void emit(cycle_ops& ops, const std::string& sink, const std::string& partition,
          const std::map<std::string, json>& ripe) {
    for (const auto& [k, v] : ripe) {
        ops.state_ops.push_back(erase(k));
        ops.push_items.push_back(
            {{"queue", sink},
             {"partition", partition},
             {"payload",
              {{"key", k.substr(0, k.find('|'))}, {"windowStart", v["windowStart"]}, {"count", v["count"]}}}});
    }
}

// One batch of the windowed count: counts per (key, window) in state; the windows whose end
// is at or before (the lane's max event time − lateness) are emitted and their state deleted.
cycle_ops count_windows(stream_client& c, const batch& b) {
    json keys = json::array({watermark_key});
    for (const auto& m : b.messages) {
        const long long ts = m["data"]["ts"];
        keys.push_back(window_key(m["data"]["key"].get<std::string>(), ts / window_ms * window_ms));
    }
    auto stored = by_key(c.state(b.partition_id, {{"keys", keys}}));
    long long max_ts = stored.count(watermark_key) ? stored[watermark_key]["maxTs"].get<long long>() : LLONG_MIN;
    std::map<std::string, json> touched;
    for (const auto& m : b.messages) {
        const long long ts = m["data"]["ts"], start = ts / window_ms * window_ms;
        const auto k = window_key(m["data"]["key"].get<std::string>(), start);
        auto it = touched.find(k);
        if (it == touched.end())
            it = touched
                     .emplace(k, stored.count(k)
                                     ? stored[k]
                                     : json{{"count", 0}, {"windowStart", start}, {"windowEnd", start + window_ms}})
                     .first;
        it->second["count"] = it->second["count"].get<long long>() + 1;
        max_ts = std::max(max_ts, ts);
    }
    const long long cutoff = max_ts - lateness_ms;
    auto ripe = by_key(c.state(b.partition_id, {{"ripe_at_or_before", cutoff}}));
    cycle_ops ops;
    for (const auto& [k, v] : touched) {
        if (v["windowEnd"].get<long long>() <= cutoff)
            ripe[k] = v;
        else
            ops.state_ops.push_back(upsert(k, v));
    }
    emit(ops, c.sink(), b.partition, ripe);
    ops.state_ops.push_back(upsert(watermark_key, {{"maxTs", max_ts}}));
    return ops;
}

TEST(StreamsEndToEnd, WindowedCountOverHundredPartitionsEmitsEveryWindowOnceAndCommitsEverything) {
    auto c = client();
    const auto source = unique_name("win-src"), sink = unique_name("win-sink"), name = unique_name("wincount");
    configure_queue(c, source, {{"leaseTime", 5}, {"retryLimit", 100}});
    // 100 partitions × 30 messages, 4 keys per partition, event times 150 ms apart with ±200 ms
    // of disorder: no event is later than the lateness allows, so each window is emitted once.
    std::mt19937 rng(20240607);
    std::vector<std::pair<std::string, json>> items;
    std::map<std::pair<std::string, long long>, long long> expected;
    for (int m = 0; m < 30; ++m)
        for (int p = 0; p < 100; ++p) {
            const std::string key = "k" + std::to_string(p * 4 + static_cast<int>(rng() % 4));
            const long long ts = base_ts + m * 150 + static_cast<long long>(rng() % 401) - 200;
            items.push_back({partition_name(p), {{"key", key}, {"ts", ts}}});
            ++expected[{key, ts / window_ms * window_ms}];
        }
    push_all(c, source, items);

    stream_client sc(broker().port(), name, source, sink, 8);
    sc.register_query();
    ASSERT_TRUE(sc.run(
        count_windows, [&] { return uncommitted_partitions(source, sc.group()) == 0; }, 45s))
        << sc.stats();
    // The source is drained: a final flush per lane emits every window left and empties the state.
    const auto lanes = source_partition_ids(source);
    ASSERT_EQ(lanes.size(), 100u);
    for (const auto& pid : lanes) {
        cycle_ops ops;
        const auto name_of = cluster().run_sql("SELECT name FROM queen.log_partitions WHERE id = " + pid);
        emit(ops, sink, name_of, by_key(sc.state(pid, {{"ripe_at_or_before", 1'000'000'000'000'000LL}})));
        ops.state_ops.push_back(erase(watermark_key));
        ASSERT_TRUE(sc.flush(pid, ops)) << sc.stats();
    }
    EXPECT_EQ(sc.stats().cycles_failed, 0) << sc.stats();

    std::map<std::pair<std::string, long long>, long long> emitted;
    int doubled = 0;
    for (const auto& p : payloads_of(sink)) {
        auto [it, fresh] = emitted.emplace(std::pair{p["key"].get<std::string>(), p["windowStart"].get<long long>()},
                                           p["count"].get<long long>());
        if (!fresh) ++doubled;
    }
    EXPECT_EQ(doubled, 0) << "a (key, window) emitted twice";
    EXPECT_EQ(emitted.size(), expected.size());
    EXPECT_TRUE(emitted == expected) << "the emitted counts differ from the input's";
    long long total = 0;
    for (const auto& [w, n] : emitted) total += n;
    EXPECT_EQ(total, 3000);
    EXPECT_EQ(sql_int(cluster(), "SELECT count(*) FROM queen.stream_state WHERE query_id = " + quote(sc.query_id())),
              0);
    EXPECT_EQ(uncommitted_partitions(source, sc.group()), 0);
    EXPECT_EQ(sql_int(cluster(),
                      "SELECT count(*) FROM queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id "
                      "WHERE q.name = " +
                          quote(source)),
              0);
    std::cout << "[ windowed ] " << expected.size() << " windows; " << sc.stats() << "\n";
}

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
