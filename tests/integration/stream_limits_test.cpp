// What a stream lane may hold and which cycles may change it (docs/streams.md, "Limits" and
// "Guarantees"): state/get refused by the database before the broker holds a row, lanes kept
// within what one state/get answers, late and replayed cycles applying nothing, and state
// values jsonb cannot store refused by name.
#include "raw_connection.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr long max_state_rows = 10'000;
constexpr long max_state_bytes = 16L << 20;

struct lane {
    std::string name, source, sink, query_id, partition_id;
    json messages;  // popped by the stream's group, leased
};

// A query over a fresh source with one partition holding `n` messages, popped by its group.
lane leased_lane(http_client& c, const std::string& prefix, int n) {
    lane l{unique_name(prefix), unique_name(prefix + "-src"), unique_name(prefix + "-sink"), "", "", json()};
    auto reg = c.post("/streams/v1/queries",
                      json{{"name", l.name}, {"source_queue", l.source}, {"sink_queue", l.sink}, {"config_hash", "h"}});
    EXPECT_EQ(reg.status, 200) << reg.body;
    l.query_id = reg.json().value("query_id", "");
    configure_queue(c, l.source, {{"leaseTime", 60}});
    std::vector<json> payloads;
    for (int i = 1; i <= n; ++i) payloads.push_back({{"n", i}});
    push_payloads(c, l.source, "p", payloads);
    auto popped = pop(c, l.source, "batch=" + std::to_string(n) + "&wait=false&consumerGroup=streams." + l.name);
    EXPECT_EQ(popped.status, 200) << popped.body;
    l.messages = popped.status == 200 ? popped.json()["messages"] : json::array();
    if (!l.messages.empty()) l.partition_id = l.messages[0]["partitionId"];
    return l;
}

json cycle(http_client& c, const lane& l, json body) {
    body["query_id"] = l.query_id;
    body["partition_id"] = l.partition_id;
    body["consumer_group"] = "streams." + l.name;
    auto r = c.post("/streams/v1/cycle", body);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.json() : json::object();
}

json upsert(const std::string& key, const json& value) { return {{"type", "upsert"}, {"key", key}, {"value", value}}; }

long long state_rows(const lane& l) {
    return data_sum("SELECT count(*) FROM queen.stream_state WHERE query_id = " + quote(l.query_id));
}

std::string state_value(const lane& l, const std::string& key) {
    return data_value("SELECT value::text FROM queen.stream_state WHERE query_id = " + quote(l.query_id) +
                      " AND key = " + quote(key));
}

// The group's cursor on the lane's partition: its newest version's committed offset.
long long committed(const lane& l) {
    return data_sum("SELECT lc.committed FROM queen.log_consumers lc JOIN queen.queues q ON q.id = lc.queue_id "
                    "WHERE q.name = " + quote(l.source) + " AND lc.consumer_group = " + quote("streams." + l.name) +
                    " ORDER BY lc.version DESC LIMIT 1");
}

long long sink_messages(const lane& l) {
    return data_sum("SELECT count(*) FROM queen.messages WHERE queue = " + quote(l.sink));
}

// `n` state rows written straight into the lane, as a lane from before the limits may hold them:
// keys k00000…, each value a JSON string of `value_bytes` bytes.
void legacy_state(const lane& l, int n, long value_bytes) {
    data_run("INSERT INTO queen.stream_lanes (query_id, partition_id) VALUES (" + quote(l.query_id) + ", " +
             l.partition_id + ") ON CONFLICT DO NOTHING");
    data_run("INSERT INTO queen.stream_state (query_id, partition_id, key, version, value) SELECT " +
             quote(l.query_id) + ", " + l.partition_id +
             ", format('k%s', lpad(i::text, 5, '0')), nextval('queen.stream_state_version'), to_jsonb(repeat('x', " +
             std::to_string(value_bytes - 2) + ")) FROM generate_series(1, " + std::to_string(n) + ") i");
}

TEST(StreamLimits, StateGetPastTheByteLimitIsRefusedByTheDatabaseBeforeTheBrokerHoldsARow) {
    broker_process b(cluster().conninfo());
    http_client c = client_of(b);
    auto l = leased_lane(c, "sl-bytes", 1);
    ASSERT_FALSE(l.partition_id.empty());
    legacy_state(l, 6, 12L << 20);  // 72 MiB of values, stored compressed
    std::this_thread::sleep_for(500ms);  // start-up settled
    const long idle = rss_kib(b.pid());
    http_reply r;
    const long peak = peak_rss_kib_during(b.pid(), [&] {
        r = c.post("/streams/v1/state/get", json{{"query_id", l.query_id}, {"partition_id", l.partition_id}});
    });
    const long grown_mib = (peak - idle) / 1024;
    std::printf("whole-lane state/get of 72 MiB: idle %ld KiB, peak %ld KiB (+%ld MiB)\n", idle, peak, grown_mib);
    EXPECT_EQ(r.status, 413) << r.body.substr(0, 300);
    EXPECT_NE(r.json().value("error", "").find("more than 16777216 bytes"), std::string::npos) << r.body;
    EXPECT_LT(grown_mib, max_state_bytes >> 20) << "a refused state/get grew the broker by " << grown_mib << " MiB";

    // Listed keys within the limit are still answered whole.
    auto one = c.post("/streams/v1/state/get",
                      json{{"query_id", l.query_id}, {"partition_id", l.partition_id}, {"keys", {"k00001"}}});
    ASSERT_EQ(one.status, 200);
    ASSERT_EQ(one.json()["rows"].size(), 1u);
    EXPECT_EQ(one.json()["rows"][0]["value"].get<std::string>().size(), (12u << 20) - 2);
}

TEST(StreamLimits, StateGetPastTheRowLimitIsRefusedNamingIt) {
    auto c = client();
    auto l = leased_lane(c, "sl-rows", 1);
    ASSERT_FALSE(l.partition_id.empty());
    legacy_state(l, max_state_rows + 1, 8);
    auto r = c.post("/streams/v1/state/get", json{{"query_id", l.query_id}, {"partition_id", l.partition_id}});
    EXPECT_EQ(r.status, 413) << r.body.substr(0, 300);
    EXPECT_EQ(r.json().value("error", ""), "the state asked for has more than 10000 rows, the most one answer holds; "
                                           "ask for fewer with keys or key_prefix");
    auto some = c.post("/streams/v1/state/get", json{{"query_id", l.query_id}, {"partition_id", l.partition_id},
                                                     {"key_prefix", "k0000"}});
    ASSERT_EQ(some.status, 200);
    EXPECT_EQ(some.json()["rows"].size(), 9u);
}

TEST(StreamLimits, ACycleMayNotTakeALanePastTheRowsOneStateGetAnswers) {
    auto c = client();
    auto l = leased_lane(c, "sl-lane-rows", 2);
    ASSERT_EQ(l.messages.size(), 2u);
    legacy_state(l, max_state_rows - 1, 8);
    const long long cursor = committed(l);

    // Two new keys: 10,001 rows. Nothing is applied, the ack and the push included.
    auto over = cycle(c, l, {{"state_ops", {upsert("new-1", 1), upsert("new-2", 2)}},
                             {"push_items", {{{"queue", l.sink}, {"payload", {{"x", 1}}}}}},
                             {"ack", {{"transactionId", l.messages[0]["transactionId"]},
                                      {"leaseId", l.messages[0]["leaseId"]}}},
                             {"release_lease", false}});
    EXPECT_EQ(over["success"], false) << over;
    EXPECT_EQ(over.value("error", ""),
              "the cycle would leave the lane with more than 10000 state rows, the most one state/get answer holds");
    EXPECT_EQ(state_rows(l), max_state_rows - 1);
    EXPECT_EQ(committed(l), cursor);
    EXPECT_EQ(sink_messages(l), 0);

    // A delete makes room: the same cycle with one key replaced is within the limit.
    auto within = cycle(c, l, {{"state_ops", {{{"type", "delete"}, {"key", "k00001"}}, upsert("new-1", 1),
                                              upsert("new-2", 2)}},
                               {"ack", {{"transactionId", l.messages[0]["transactionId"]},
                                        {"leaseId", l.messages[0]["leaseId"]}}},
                               {"release_lease", false}});
    EXPECT_EQ(within["success"], true) << within;
    EXPECT_EQ(state_rows(l), max_state_rows);
    auto whole = c.post("/streams/v1/state/get", json{{"query_id", l.query_id}, {"partition_id", l.partition_id}});
    ASSERT_EQ(whole.status, 200) << whole.body.substr(0, 300);
    EXPECT_EQ(whole.json()["rows"].size(), static_cast<std::size_t>(max_state_rows));
}

TEST(StreamLimits, ACycleMayNotTakeALanePastTheBytesOneStateGetAnswers) {
    auto c = client();
    auto l = leased_lane(c, "sl-lane-bytes", 3);
    ASSERT_EQ(l.messages.size(), 3u);
    const std::string nine_mib((9u << 20) - 2, 'y');
    const json lease = l.messages[0]["leaseId"];
    auto ack_of = [&](int i) { return json{{"transactionId", l.messages[i]["transactionId"]}, {"leaseId", lease}}; };

    auto first = cycle(c, l, {{"state_ops", {upsert("a", nine_mib)}}, {"ack", ack_of(0)}, {"release_lease", false}});
    ASSERT_EQ(first["success"], true) << first.dump().substr(0, 300);
    const long long cursor = committed(l);

    // Another 9 MiB key: 18 MiB of keys and values, more than one answer holds.
    auto over = cycle(c, l, {{"state_ops", {upsert("b", nine_mib)}}, {"ack", ack_of(1)}, {"release_lease", false}});
    EXPECT_EQ(over["success"], false);
    EXPECT_EQ(over.value("error", "").find("the cycle would leave the lane with 18874370 bytes of state keys and "
                                           "values, more than the 16777216 one state/get answer holds"),
              0u)
        << over.value("error", "");
    EXPECT_EQ(state_rows(l), 1);
    EXPECT_EQ(state_value(l, "b"), "");
    EXPECT_EQ(committed(l), cursor);

    // Replacing the key keeps the lane's size: applied.
    auto replaced = cycle(c, l, {{"state_ops", {upsert("a", std::string((9u << 20) - 2, 'z'))}}, {"ack", ack_of(1)},
                                 {"release_lease", false}});
    EXPECT_EQ(replaced["success"], true) << replaced.dump().substr(0, 300);
    EXPECT_EQ(state_value(l, "a").substr(0, 4), "\"zzz");
    EXPECT_GT(committed(l), cursor);
}

// The issue's reproduction: cycle A (ack m1, count=1), cycle B (ack m2, count=2), then A again.
void replay_applies_nothing(http_client& c, const lane& l, bool with_lease) {
    auto ack_of = [&](int i) {
        json a{{"transactionId", l.messages[i]["transactionId"]}};
        if (with_lease) a["leaseId"] = l.messages[i]["leaseId"];
        return a;
    };
    const json cycle_a{{"state_ops", {upsert("count", 1)}},
                       {"push_items", {{{"queue", l.sink}, {"payload", {{"count", 1}}}}}},
                       {"ack", ack_of(0)},
                       {"release_lease", false}};
    auto a = cycle(c, l, cycle_a);
    ASSERT_EQ(a["success"], true) << a;
    EXPECT_EQ(a["applied"], true);
    auto b = cycle(c, l, {{"state_ops", {upsert("count", 2)}},
                          {"push_items", {{{"queue", l.sink}, {"payload", {{"count", 2}}}}}},
                          {"ack", ack_of(1)},
                          {"release_lease", false}});
    ASSERT_EQ(b["success"], true) << b;
    const long long cursor = committed(l);

    auto again = cycle(c, l, cycle_a);
    EXPECT_EQ(again["success"], true) << again;
    EXPECT_EQ(again["applied"], false);
    EXPECT_EQ(again["state_ops_applied"], 0);
    EXPECT_EQ(again["push_results"], json::array());
    EXPECT_EQ(state_value(l, "count"), "2");
    EXPECT_EQ(committed(l), cursor);
    EXPECT_EQ(sink_messages(l), 2);

    // Even with a push under a transaction id dedup has never seen: nothing is pushed.
    json fresh = cycle_a;
    fresh["push_items"][0]["transactionId"] = unique_name("never-seen");
    auto late = cycle(c, l, fresh);
    EXPECT_EQ(late["applied"], false) << late;
    EXPECT_EQ(sink_messages(l), 2);
    EXPECT_EQ(state_value(l, "count"), "2");
}

TEST(StreamLimits, AReplayedCycleWithItsLeaseKeptAppliesNothing) {
    auto c = client();
    auto l = leased_lane(c, "sl-replay", 3);
    ASSERT_EQ(l.messages.size(), 3u);
    replay_applies_nothing(c, l, true);
}

TEST(StreamLimits, AReplayedCycleWithoutALeaseIdAppliesNothing) {
    auto c = client();
    auto l = leased_lane(c, "sl-replay-nolease", 3);
    ASSERT_EQ(l.messages.size(), 3u);
    replay_applies_nothing(c, l, false);
}

TEST(StreamLimits, ACycleWithoutAnAckThatNamesALeaseAppliesOnlyWhileItIsLive) {
    auto c = client();
    auto l = leased_lane(c, "sl-ackless", 1);
    ASSERT_EQ(l.messages.size(), 1u);
    const json lease = l.messages[0]["leaseId"];

    auto stale = cycle(c, l, {{"state_ops", {upsert("w", 1)}}, {"lease_id", "6f1c3d2e-0000-4000-8000-000000000000"}});
    EXPECT_EQ(stale["success"], false);
    EXPECT_EQ(stale.value("error", ""), "Invalid or expired lease");
    auto bad_type = cycle(c, l, {{"state_ops", {upsert("w", 1)}}, {"lease_id", 7}});
    EXPECT_EQ(bad_type.value("error", ""), "lease_id must be a string");
    EXPECT_EQ(state_rows(l), 0);

    auto live = cycle(c, l, {{"state_ops", {upsert("w", 1)}}, {"lease_id", lease}});
    EXPECT_EQ(live["success"], true) << live;
    EXPECT_EQ(live["applied"], true);
    EXPECT_EQ(live["ack_result"], nullptr);
    EXPECT_EQ(state_value(l, "w"), "1");

    // Once the ack released the lease, a late cycle without an ack names a dead lease.
    auto acked = cycle(c, l, {{"ack", {{"transactionId", l.messages[0]["transactionId"]}, {"leaseId", lease}}}});
    ASSERT_EQ(acked["success"], true) << acked;
    auto late = cycle(c, l, {{"state_ops", {upsert("w", 0)}}, {"lease_id", lease}});
    EXPECT_EQ(late["success"], false);
    EXPECT_EQ(late.value("error", ""), "Invalid or expired lease");
    EXPECT_EQ(state_value(l, "w"), "1");

    // Queen's SDKs flush idle windows with `ack: null` and no lease: applied as sent.
    auto flush = cycle(c, l, {{"state_ops", {upsert("w", 2)}}, {"ack", nullptr}});
    EXPECT_EQ(flush["success"], true) << flush;
    EXPECT_EQ(flush["applied"], true);
    EXPECT_EQ(state_value(l, "w"), "2");
}

TEST(StreamLimits, AStateValueHoldingNulFailsTheCycleNamingTheField) {
    broker_process b(cluster().conninfo());
    http_client c = client_of(b);
    auto l = leased_lane(c, "sl-nul", 1);
    ASSERT_EQ(l.messages.size(), 1u);
    const std::string body_head = "{\"query_id\":\"" + l.query_id + "\",\"partition_id\":\"" + l.partition_id +
                                  "\",\"consumer_group\":\"streams." + l.name + "\",\"lease_id\":\"" + l.messages[0]["leaseId"].get<std::string>() + "\",";
    for (int attempt = 0; attempt < 2; ++attempt) {
        auto r = c.post("/streams/v1/cycle", body_head + R"("state_ops":[{"type":"upsert","key":"ok","value":1},)" +
                                                 R"({"type":"upsert","key":"k","value":{"s":"a\u0000b"}}]})");
        ASSERT_EQ(r.status, 200) << r.body;
        EXPECT_EQ(r.json()["success"], false);
        EXPECT_EQ(r.json().value("error", ""), "state_ops[1].value must not contain \\u0000 (state is stored as jsonb)");
    }
    EXPECT_EQ(state_rows(l), 0);
    EXPECT_EQ(b.log().find("ERROR"), std::string::npos) << b.log();

    // An escaped backslash before "u0000" is text, and stored as such.
    auto ok = c.post("/streams/v1/cycle",
                     body_head + R"("state_ops":[{"type":"upsert","key":"k","value":{"s":"a\\u0000b"}}]})");
    ASSERT_EQ(ok.status, 200) << ok.body;
    EXPECT_EQ(ok.json()["success"], true) << ok.body;
    EXPECT_EQ(state_value(l, "k"), R"({"s": "a\\u0000b"})");
}

}  // namespace
}  // namespace queen::test
