// StreamsEndToEnd, a windowed count over 100 partitions: tumbling windows per key, emitted once
// ripe; every window emitted once with the input's count, the state emptied, everything committed.
//
// Streams end to end: a small client that follows the streaming SDK's protocol
// (streams_e2e_support.hpp) runs real pipelines against the broker. The other file of the suite:
// streams_e2e_window_test.cpp, streams_e2e_kill9_test.cpp.
#include "streams_e2e_support.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace queen::test {
namespace {

using namespace streams_e2e_support;
using nlohmann::json;
using namespace std::chrono_literals;

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

}  // namespace
}  // namespace queen::test
