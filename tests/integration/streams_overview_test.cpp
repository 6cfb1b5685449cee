// GET /api/v1/resources/streams (docs/streams.md, "The dashboard's view"): every stream query
// by name with its lanes, state rows and bytes and its group's lag on the source queue, the
// numbers exact and the same as the database's own tables say.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace queen::test {
namespace {

using nlohmann::json;

std::string group_of(const std::string& name) {
    return "streams." + name;
}

std::string register_query(http_client& c, const std::string& name, const std::string& source, const json& sink) {
    auto r = c.post("/streams/v1/queries",
                    json{{"name", name}, {"source_queue", source}, {"sink_queue", sink}, {"config_hash", "h1"}});
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.json().value("query_id", std::string()) : std::string();
}

// `n` messages {"n": i} pushed to one partition of `queue`.
void push_n(http_client& c, const std::string& queue, const std::string& partition, int n) {
    std::vector<json> payloads;
    for (int i = 1; i <= n; ++i) payloads.push_back({{"n", i}});
    push_payloads(c, queue, partition, payloads);
}

// The messages of one partition popped by the stream's group.
json pop_partition(http_client& c, const std::string& queue, const std::string& partition, const std::string& name,
                   int n) {
    auto r = pop(c, queue, "batch=" + std::to_string(n) + "&wait=false&consumerGroup=" + group_of(name), partition);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.json()["messages"] : json::array();
}

// One cycle on the lane of the popped messages: the state ops, and the ack of messages[ack_index].
void cycle(http_client& c, const std::string& id, const std::string& name, const json& messages, const json& state_ops,
           std::size_t ack_index) {
    const json& m = messages.at(ack_index);
    auto r =
        c.post("/streams/v1/cycle", json{{"query_id", id},
                                         {"partition_id", m["partitionId"]},
                                         {"consumer_group", group_of(name)},
                                         {"state_ops", state_ops},
                                         {"ack", {{"transactionId", m["transactionId"]}, {"leaseId", m["leaseId"]}}}});
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_EQ(r.json()["success"], true) << r.body;
}

// The route's element for `name`, or null.
json row_of(const json& answer, const std::string& name) {
    for (const auto& s : answer["streams"])
        if (s["name"] == name) return s;
    return nullptr;
}

// The same numbers read from the tables themselves: lanes, state rows, state bytes, and the
// source messages past the group's committed offset (0 where it has no cursor).
std::string from_tables(const std::string& query_id, const std::string& name, const std::string& source) {
    const std::string q = quote(query_id);
    return cluster().run_sql(
        "SELECT concat_ws('|',"
        " (SELECT count(*) FROM queen.stream_lanes WHERE query_id = " +
        q +
        "),"
        " (SELECT count(*) FROM queen.stream_state WHERE query_id = " +
        q +
        "),"
        " (SELECT coalesce(sum(pg_column_size(value) + octet_length(key)), 0) FROM queen.stream_state"
        "   WHERE query_id = " +
        q +
        "),"
        " (SELECT count(*) FROM queen.messages m"
        "   WHERE m.queue = " +
        quote(source) +
        "     AND m.\"offset\" > coalesce((SELECT lc.committed FROM queen.log_consumers lc"
        "                                  WHERE lc.partition_id = m.partition_id"
        "                                    AND lc.consumer_group = " +
        quote(group_of(name)) + "                                  ORDER BY lc.version DESC LIMIT 1), 0)))");
}

// "lanes|stateRows|stateBytes|sourceLag" of a route element.
std::string from_route(const json& s) {
    return std::to_string(s["lanes"].get<long long>()) + "|" + std::to_string(s["stateRows"].get<long long>()) + "|" +
           std::to_string(s["stateBytes"].get<long long>()) + "|" + std::to_string(s["sourceLag"].get<long long>());
}

TEST(StreamsOverview, ListsQueriesWithLanesStateAndSourceLag) {
    auto c = client();
    const auto base = unique_name("overview");
    // Registered out of name order; listed by name.
    const auto busy = base + "-b", idle = base + "-a", orphan = base + "-c";
    const auto busy_src = base + "-busy-src", idle_src = base + "-idle-src", sink = base + "-sink";

    // busy: p1 holds 5 messages and p2 3. Its group pops p1 whole, and one cycle writes three
    // keys, rewrites one and deletes another (2 live keys) and acks the 3rd message: p1 lags
    // 2. It pops p2 whole, and one cycle writes one key and acks the 1st message: p2 lags 2.
    const auto busy_id = register_query(c, busy, busy_src, sink);
    ASSERT_FALSE(busy_id.empty());
    configure_queue(c, busy_src, {{"leaseTime", 300}});
    push_n(c, busy_src, "p1", 5);
    push_n(c, busy_src, "p2", 3);
    auto p1 = pop_partition(c, busy_src, "p1", busy, 5);
    ASSERT_EQ(p1.size(), 5u);
    cycle(c, busy_id, busy, p1,
          json::array({{{"type", "upsert"}, {"key", "alpha"}, {"value", {{"count", 1}}}},
                       {{"type", "upsert"}, {"key", "beta"}, {"value", "some text"}},
                       {{"type", "upsert"}, {"key", "gamma"}, {"value", 3}},
                       {{"type", "upsert"}, {"key", "alpha"}, {"value", {{"count", 2}}}},
                       {{"type", "delete"}, {"key", "gamma"}}}),
          2);
    auto p2 = pop_partition(c, busy_src, "p2", busy, 3);
    ASSERT_EQ(p2.size(), 3u);
    cycle(c, busy_id, busy, p2, json::array({{{"type", "upsert"}, {"key", "delta"}, {"value", json::array({1, 2})}}}),
          0);

    // idle: its source holds 4 messages its group never popped (no cursor: counted from 0).
    const auto idle_id = register_query(c, idle, idle_src, nullptr);
    ASSERT_FALSE(idle_id.empty());
    push_n(c, idle_src, "", 4);

    // orphan: its source queue does not exist.
    const auto orphan_id = register_query(c, orphan, base + "-no-such-queue", nullptr);
    ASSERT_FALSE(orphan_id.empty());

    auto r = c.get("/api/v1/resources/streams");
    ASSERT_EQ(r.status, 200) << r.body;
    const json answer = r.json();
    ASSERT_TRUE(answer["streams"].is_array()) << r.body;

    // Every element of the answer (other tests' queries included) in byte order of name.
    std::vector<std::string> names;
    for (const auto& s : answer["streams"]) names.push_back(s["name"]);
    for (std::size_t i = 1; i < names.size(); ++i) EXPECT_LT(names[i - 1], names[i]) << "not sorted at " << i;
    const auto at = [&names](const std::string& n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
    EXPECT_LT(at(idle), at(busy));
    EXPECT_LT(at(busy), at(orphan));

    const json b = row_of(answer, busy), i = row_of(answer, idle), o = row_of(answer, orphan);
    ASSERT_TRUE(b.is_object() && i.is_object() && o.is_object()) << r.body;

    // busy: 2 lanes, 3 live keys (alpha, beta on p1; delta on p2), lag 2 + 2.
    EXPECT_EQ(b["queryId"], busy_id);
    EXPECT_EQ(b["sourceQueue"], busy_src);
    EXPECT_EQ(b["sinkQueue"], sink);
    EXPECT_EQ(b["configHash"], "h1");
    EXPECT_EQ(b["lanes"], 2);
    EXPECT_EQ(b["stateRows"], 3);
    EXPECT_EQ(b["sourceLag"], 4);
    // 14 bytes of keys (alpha, beta, delta) and the values as stored: {"count": 2} 29,
    // "some text" 18, [1, 2] 29 (jsonb with a 1-byte varlena header each).
    EXPECT_EQ(b["stateBytes"], 90);
    EXPECT_TRUE(b["sourceOldestPendingAt"].is_string()) << b;
    EXPECT_GE(b["sourceTimeLag"].get<long long>(), 0);
    // The oldest pending message is p1's 4th (p1 was pushed first).
    EXPECT_EQ(cluster().run_sql("SELECT (" + quote(b["sourceOldestPendingAt"].get<std::string>()) +
                                "::timestamptz = m.created_at)::text FROM queen.messages m WHERE m.queue = " +
                                quote(busy_src) + " AND m.partition = 'p1' AND m.\"offset\" = 4"),
              "true");

    // idle: nothing consumed, every message of its source is lag.
    EXPECT_EQ(i["queryId"], idle_id);
    EXPECT_EQ(i["sinkQueue"], nullptr);
    EXPECT_EQ(i["lanes"], 0);
    EXPECT_EQ(i["stateRows"], 0);
    EXPECT_EQ(i["stateBytes"], 0);
    EXPECT_EQ(i["sourceLag"], 4);
    EXPECT_TRUE(i["sourceOldestPendingAt"].is_string()) << i;
    EXPECT_EQ(
        sql_int(cluster(), "SELECT count(*) FROM queen.log_consumers WHERE consumer_group = " + quote(group_of(idle))),
        0);

    // orphan: no source queue, no lag.
    EXPECT_EQ(o["queryId"], orphan_id);
    EXPECT_EQ(o["lanes"], 0);
    EXPECT_EQ(o["stateRows"], 0);
    EXPECT_EQ(o["stateBytes"], 0);
    EXPECT_EQ(o["sourceLag"], 0);
    EXPECT_EQ(o["sourceOldestPendingAt"], nullptr);
    EXPECT_EQ(o["sourceTimeLag"], 0);

    // The database holds the same numbers: counted from its tables, and as the function answers.
    EXPECT_EQ(from_route(b), from_tables(busy_id, busy, busy_src));
    EXPECT_EQ(from_route(i), from_tables(idle_id, idle, idle_src));
    EXPECT_EQ(from_route(o), from_tables(orphan_id, orphan, base + "-no-such-queue"));
    EXPECT_EQ(
        cluster().run_sql("SELECT concat_ws('|', lanes, state_rows, state_bytes, source_lag, (query_id = " +
                          quote(busy_id) + ")::text) FROM queen.stream_queries_overview() WHERE name = " + quote(busy)),
        from_route(b) + "|true");
    EXPECT_EQ(cluster().run_sql("SELECT (" + quote(b["createdAt"].get<std::string>()) +
                                "::timestamptz = created_at AND " + quote(b["updatedAt"].get<std::string>()) +
                                "::timestamptz = updated_at)::text "
                                "FROM queen.stream_queries WHERE name = " +
                                quote(busy)),
              "true");
}

}  // namespace
}  // namespace queen::test
