// The three stream routes (docs/streams.md) through every rule of their contract: registration,
// state reads, and cycles that apply everything or nothing.
#include "prometheus_samples.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <string>

namespace queen::test {
namespace {

using nlohmann::json;

json post_ok(http_client& c, const std::string& path, const json& body) {
    auto r = c.post(path, body);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return r.status == 200 ? r.json() : json::object();
}

std::string register_query(http_client& c, const std::string& name, const std::string& source,
                           const std::string& sink, const std::string& hash = "h1") {
    auto r = post_ok(c, "/streams/v1/queries",
                     {{"name", name}, {"source_queue", source}, {"sink_queue", sink}, {"config_hash", hash}});
    return r.value("query_id", std::string());
}

json state_of(http_client& c, const std::string& query_id, const std::string& partition_id,
              const json& extra = json::object()) {
    json body{{"query_id", query_id}, {"partition_id", partition_id}};
    body.update(extra);
    return post_ok(c, "/streams/v1/state/get", body);
}

std::string group_of(const std::string& name) { return "streams." + name; }

// A source queue with one partition "p" holding `n` messages {"n": i}, popped by the stream's
// group: the pop's messages.
json popped(http_client& c, const std::string& source, const std::string& name, int n, const json& options = {}) {
    configure_queue(c, source, options.is_null() ? json{{"leaseTime", 30}} : options);
    std::vector<json> payloads;
    for (int i = 1; i <= n; ++i) payloads.push_back({{"n", i}});
    push_payloads(c, source, "p", payloads);
    auto r = pop(c, source, "batch=" + std::to_string(n) + "&wait=false&consumerGroup=" + group_of(name));
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.json()["messages"] : json::array();
}

json ack_of(const json& m) { return {{"transactionId", m["transactionId"]}, {"leaseId", m["leaseId"]}}; }

// Every row a cycle may write, as text: the query's state and lanes, the sink's messages, the
// source's cursors and dead letters.
std::string tables(const std::string& query_id, const std::string& source, const std::string& sink) {
    const std::string q = quote(query_id);
    std::string all;  // every database's rows, one after another (a cycle writes one shard's)
    for (const auto& row : data_rows(
        "SELECT concat_ws(' | ',"
        " (SELECT string_agg(format('%s/%s=%s@%s', partition_id, key, value, version), ',' ORDER BY partition_id, key)"
        "    FROM queen.stream_state WHERE query_id = " + q + "),"
        " (SELECT string_agg(partition_id::text, ',' ORDER BY partition_id) FROM queen.stream_lanes WHERE query_id = " +
        q + "),"
        " (SELECT string_agg(format('%s:%s:%s', transaction_id, payload, producer_sub), ',' ORDER BY partition, \"offset\")"
        "    FROM queen.messages WHERE queue = " + quote(sink) + "),"
        " (SELECT string_agg(format('%s:%s:%s:%s:%s:%s', lc.consumer_group, lc.committed, lc.lease_id, lc.lease_end,"
        "                           lc.lease_counted, lc.attempts), ',' ORDER BY lc.partition_id, lc.consumer_group)"
        "    FROM queen.log_consumers lc JOIN queen.queues qu ON qu.id = lc.queue_id WHERE qu.name = " + quote(source) +
        "),"
        " (SELECT count(*) FROM queen.dead_letters d JOIN queen.queues qu ON qu.id = d.queue_id WHERE qu.name = " +
        quote(source) + "))"))
        all += (all.empty() ? "" : " || ") + row;
    return all;
}

TEST(Streams, RegistrationIsIdempotentByNameAndAChangedHashNeedsReset) {
    auto c = client();
    const auto name = unique_name("reg"), source = unique_name("reg-src");
    auto first = post_ok(c, "/streams/v1/queries",
                         {{"name", name}, {"source_queue", source}, {"sink_queue", nullptr}, {"config_hash", "h1"}});
    EXPECT_EQ(first["success"], true);
    EXPECT_EQ(first["fresh"], true);
    EXPECT_EQ(first["reset"], false);
    EXPECT_EQ(first["name"], name);
    const std::string id = first["query_id"];
    EXPECT_EQ(id.size(), 36u);

    auto again = post_ok(c, "/streams/v1/queries",
                         {{"name", name}, {"source_queue", source}, {"sink_queue", "out"}, {"config_hash", "h1"}});
    EXPECT_EQ(again["query_id"], id);
    EXPECT_EQ(again["fresh"], false);
    EXPECT_EQ(again["reset"], false);
    EXPECT_EQ(data_value("SELECT sink_queue FROM queen.stream_queries WHERE name = " + quote(name)), "out");

    // State of the query, then another hash without reset: 409, nothing changes.
    auto m = popped(c, source, name, 1);
    auto pid = m[0]["partitionId"].get<std::string>();
    auto cyc = post_ok(c, "/streams/v1/cycle",
                       {{"query_id", id}, {"partition_id", pid}, {"consumer_group", group_of(name)},
                        {"lease_id", m[0]["leaseId"]}, {"state_ops", {{{"type", "upsert"}, {"key", "k"}, {"value", 1}}}}});
    ASSERT_EQ(cyc["success"], true) << cyc;
    auto conflict = c.post("/streams/v1/queries", json{{"name", name}, {"source_queue", source}, {"config_hash", "h2"}});
    EXPECT_EQ(conflict.status, 409) << conflict.body;
    EXPECT_EQ(conflict.json()["success"], false);
    EXPECT_EQ(conflict.json()["query_id"], id);
    EXPECT_EQ(conflict.json()["name"], name);
    EXPECT_EQ(conflict.json()["error"].get<std::string>().rfind("config_hash mismatch: ", 0), 0u) << conflict.body;
    EXPECT_EQ(data_value("SELECT config_hash FROM queen.stream_queries WHERE name = " + quote(name)), "h1");
    EXPECT_EQ(state_of(c, id, pid)["rows"].size(), 1u);

    // With reset: every state row of the query is gone and the new hash stored.
    auto reset = post_ok(c, "/streams/v1/queries",
                         {{"name", name}, {"source_queue", source}, {"config_hash", "h2"}, {"reset", true}});
    EXPECT_EQ(reset["success"], true);
    EXPECT_EQ(reset["reset"], true);
    EXPECT_EQ(reset["fresh"], false);
    EXPECT_EQ(reset["query_id"], id);
    EXPECT_EQ(state_of(c, id, pid)["rows"].size(), 0u);
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.stream_state WHERE query_id = " + quote(id)), 0);
    EXPECT_EQ(data_value("SELECT config_hash FROM queen.stream_queries WHERE name = " + quote(name)), "h2");
}

TEST(Streams, RegistrationRefusesBadBodiesNamingTheField) {
    auto c = client();
    const auto name = unique_name("reg-bad");
    const std::vector<std::pair<json, std::string>> cases{
        {json::array(), "request body must be a JSON object"},
        {{{"source_queue", "s"}, {"config_hash", "h"}}, "name is required"},
        {{{"name", ""}, {"source_queue", "s"}, {"config_hash", "h"}}, "name is required"},
        {{{"name", name}, {"config_hash", "h"}}, "source_queue is required"},
        {{{"name", name}, {"source_queue", 5}, {"config_hash", "h"}}, "source_queue is required"},
        {{{"name", name}, {"source_queue", "s"}}, "config_hash is required"},
        {{{"name", name}, {"source_queue", "s"}, {"config_hash", "h"}, {"sink_queue", 3}},
         "sink_queue must be a string or null"},
        {{{"name", name}, {"source_queue", "s"}, {"config_hash", "h"}, {"reset", "yes"}}, "reset must be a boolean"},
    };
    for (const auto& [body, error] : cases) {
        auto r = c.post("/streams/v1/queries", body);
        EXPECT_EQ(r.status, 400) << body.dump();
        EXPECT_EQ(r.json().value("error", ""), error) << body.dump();
    }
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.stream_queries WHERE name = " + quote(name)), 0);
}

TEST(Streams, StateGetFiltersByKeysPrefixAndRipenessSortedByKey) {
    auto c = client();
    const auto name = unique_name("state"), source = unique_name("state-src");
    const auto id = register_query(c, name, source, "");
    auto m = popped(c, source, name, 1);
    const std::string pid = m[0]["partitionId"];
    json ops = json::array();
    ops.push_back({{"type", "upsert"}, {"key", "b:2"}, {"value", {{"windowEnd", 2000}, {"count", 2}}}});
    ops.push_back({{"type", "upsert"}, {"key", "a:1"}, {"value", {{"windowEnd", 1000}, {"count", 1}}}});
    ops.push_back({{"type", "upsert"}, {"key", "a:3"}, {"value", {{"windowEnd", "3000"}}}});
    ops.push_back({{"type", "upsert"}, {"key", "B"}, {"value", json::array({1, 2})}});
    ops.push_back({{"type", "upsert"}, {"key", "c"}, {"value", {{"windowEnd", 500}, {"x", 1.10}}}});
    ops.push_back({{"type", "delete"}, {"key", "c"}});
    ops.push_back({{"type", "delete"}, {"key", "never-there"}});
    auto cyc = post_ok(c, "/streams/v1/cycle", {{"query_id", id}, {"partition_id", pid}, {"consumer_group", group_of(name)},
                                                {"lease_id", m[0]["leaseId"]}, {"state_ops", ops}});
    ASSERT_EQ(cyc["success"], true) << cyc;
    EXPECT_EQ(cyc["state_ops_applied"], 7);

    auto keys_of = [](const json& answer) {
        std::vector<std::string> out;
        for (const auto& r : answer["rows"]) out.push_back(r["key"]);
        return out;
    };
    auto all = state_of(c, id, pid);
    EXPECT_EQ(all["success"], true);
    EXPECT_EQ(keys_of(all), (std::vector<std::string>{"B", "a:1", "a:3", "b:2"}));
    EXPECT_EQ(all["rows"][0]["value"], json::array({1, 2}));
    EXPECT_TRUE(all["rows"][0]["updated_at"].is_string());
    EXPECT_EQ(keys_of(state_of(c, id, pid, {{"keys", {"b:2", "missing", "B", "B"}}})),
              (std::vector<std::string>{"B", "b:2"}));
    EXPECT_EQ(keys_of(state_of(c, id, pid, {{"keys", json::array()}})).size(), 4u);
    EXPECT_EQ(keys_of(state_of(c, id, pid, {{"key_prefix", "a:"}})), (std::vector<std::string>{"a:1", "a:3"}));
    EXPECT_EQ(keys_of(state_of(c, id, pid, {{"ripe_at_or_before", 2000}})), (std::vector<std::string>{"a:1", "b:2"}));
    EXPECT_EQ(keys_of(state_of(c, id, pid, {{"ripe_at_or_before", 1999.5}})), (std::vector<std::string>{"a:1"}));
    EXPECT_EQ(keys_of(state_of(c, id, pid, {{"ripe_at_or_before", 5000}, {"key_prefix", "b"}})),
              (std::vector<std::string>{"b:2"}));
    EXPECT_EQ(keys_of(state_of(c, id, pid, {{"ripe_at_or_before", 5000}, {"keys", {"a:3", "a:1"}}})),
              (std::vector<std::string>{"a:1"}));
    // Unknown query or partition: no rows.
    EXPECT_EQ(state_of(c, "00000000-0000-0000-0000-000000000000", pid)["rows"].size(), 0u);
    EXPECT_EQ(state_of(c, id, "999999999")["rows"].size(), 0u);
    EXPECT_EQ(state_of(c, id, "not-a-partition")["rows"].size(), 0u);
    // One version row per live key.
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.stream_state WHERE query_id = " + quote(id)), 4);

    const std::vector<std::pair<json, std::string>> bad{
        {{{"partition_id", pid}}, "query_id is required and must be a string"},
        {{{"query_id", "q-1"}, {"partition_id", pid}}, "query_id must be a UUID (as POST /streams/v1/queries returns it)"},
        {{{"query_id", id}}, "partition_id is required and must be a string"},
        {{{"query_id", id}, {"partition_id", 7}}, "partition_id is required and must be a string"},
        {{{"query_id", id}, {"partition_id", pid}, {"keys", "a"}}, "keys must be an array of strings"},
        {{{"query_id", id}, {"partition_id", pid}, {"keys", {1}}}, "keys[0] must be a string"},
        {{{"query_id", id}, {"partition_id", pid}, {"ripe_at_or_before", "1000"}},
         "ripe_at_or_before must be a number (epoch milliseconds)"},
    };
    for (const auto& [body, error] : bad) {
        auto r = c.post("/streams/v1/state/get", body);
        EXPECT_EQ(r.status, 400) << body.dump();
        EXPECT_EQ(r.json().value("error", ""), error) << body.dump();
    }
}

// A lane never holds more than its whole-lane state/get answers: the cycle that would take it
// past the row limit fails, naming it (docs/streams.md, "Limits"; more in StreamLimits).
TEST(Streams, ACycleMayNotTakeALanePastTheRowsOneStateGetAnswers) {
    auto c = client();
    const auto name = unique_name("state-limit"), source = unique_name("state-limit-src");
    const auto id = register_query(c, name, source, "");
    auto m = popped(c, source, name, 1);
    const std::string pid = m[0]["partitionId"];
    for (int part = 0; part < 2; ++part) {
        json ops = json::array();
        for (int i = 0; i < 5001; ++i)
            ops.push_back({{"type", "upsert"}, {"key", "k" + std::to_string(part * 5001 + i)}, {"value", i}});
        auto cyc = post_ok(c, "/streams/v1/cycle", {{"query_id", id}, {"partition_id", pid},
                                                    {"consumer_group", group_of(name)}, {"lease_id", m[0]["leaseId"]},
                                                    {"state_ops", ops}});
        EXPECT_EQ(cyc["success"], part == 0) << cyc.dump().substr(0, 300);
        if (part == 1) {
            EXPECT_EQ(cyc.value("error", ""), "the cycle would leave the lane with more than 10000 state rows, the "
                                              "most one state/get answer holds");
        }
    }
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.stream_state WHERE query_id = " + quote(id)), 5001);
    auto all = state_of(c, id, pid);
    EXPECT_EQ(all["rows"].size(), 5001u);
    auto some = state_of(c, id, pid, {{"key_prefix", "k100"}});
    EXPECT_EQ(some["rows"].size(), 11u);  // k100, k1000 … k1009
}

// The same for bytes: 1 MiB values fill a lane up to the 16 MiB one answer holds, then no more.
TEST(Streams, ACycleMayNotTakeALanePastTheBytesOneStateGetAnswers) {
    auto c = client();
    const auto name = unique_name("state-bytes"), source = unique_name("state-bytes-src");
    const auto id = register_query(c, name, source, "");
    auto m = popped(c, source, name, 1);
    const std::string pid = m[0]["partitionId"];
    const std::string big(1 << 20, 'x');
    // Each row is its key ("bigN") and its value's JSON text (2^20 + 2 bytes): 15 fit, 16 do not.
    for (int i = 0; i < 16; ++i) {
        auto cyc = post_ok(c, "/streams/v1/cycle",
                           {{"query_id", id},
                            {"partition_id", pid},
                            {"consumer_group", group_of(name)},
                            {"lease_id", m[0]["leaseId"]},
                            {"state_ops", {{{"type", "upsert"}, {"key", "big" + std::to_string(i)}, {"value", big}}}}});
        EXPECT_EQ(cyc["success"], i < 15) << i;
        if (i == 15) {
            EXPECT_EQ(cyc.value("error", "").find("the cycle would leave the lane with 16777318 bytes of state keys "
                                                  "and values, more than the 16777216"),
                      0u)
                << cyc.value("error", "");
        }
    }
    auto all = state_of(c, id, pid);
    EXPECT_EQ(all["rows"].size(), 15u);
    EXPECT_EQ(state_of(c, id, pid, {{"keys", {"big3"}}})["rows"][0]["value"], big);
}

TEST(Streams, ACycleAppliesStateSinkPushesAndTheAckTogether) {
    auto c = client();
    const auto name = unique_name("cycle"), source = unique_name("cycle-src"), sink = unique_name("cycle-sink");
    const auto id = register_query(c, name, source, sink);
    auto msgs = popped(c, source, name, 3);
    ASSERT_EQ(msgs.size(), 3u);
    const std::string pid = msgs[0]["partitionId"];
    json body{{"query_id", id},
              {"partition_id", pid},
              {"consumer_group", group_of(name)},
              {"state_ops", {{{"type", "upsert"}, {"key", "sum"}, {"value", {{"sum", 6}}}}}},
              {"push_items",
               {{{"queue", sink}, {"partition", "p"}, {"payload", {{"sum", 6}}}, {"transactionId", "out-1"}},
                {{"queue", sink}, {"partition", "p"}, {"payload", {{"sum", 7}}}}}},
              {"ack", {{"transactionId", msgs[2]["transactionId"]}, {"leaseId", msgs[2]["leaseId"]}, {"count", 3}}}};
    auto r = post_ok(c, "/streams/v1/cycle", body);
    EXPECT_EQ(r["success"], true) << r;
    EXPECT_EQ(r["query_id"], id);
    EXPECT_EQ(r["partition_id"], pid);
    EXPECT_EQ(r["queueName"], source);
    EXPECT_EQ(r["state_ops_applied"], 1);
    ASSERT_EQ(r["push_results"].size(), 2u);
    EXPECT_EQ(r["push_results"][0]["status"], "queued");
    EXPECT_EQ(r["push_results"][0]["transaction_id"], "out-1");
    EXPECT_EQ(r["push_results"][1]["status"], "queued");
    EXPECT_EQ(r["ack_result"], (json{{"success", true}, {"count", 3}, {"lease_released", true}, {"dlq", false}}));

    // The source is committed through the acked message, its lease released.
    EXPECT_EQ(data_value("SELECT committed::text || ':' || (lease_id IS NULL)::text FROM queen.log_consumers lc "
                                "JOIN queen.queues q ON q.id = lc.queue_id WHERE q.name = " + quote(source) +
                                " AND consumer_group = " + quote(group_of(name)) + " AND lc.partition_id = " + pid),
              "3:true");
    // The sink holds both messages, in order.
    auto out = pop(c, sink, "batch=10&wait=false");
    ASSERT_EQ(out.status, 200);
    ASSERT_EQ(out.json()["messages"].size(), 2u);
    EXPECT_EQ(out.json()["messages"][0]["data"], (json{{"sum", 6}}));
    EXPECT_EQ(out.json()["messages"][1]["data"], (json{{"sum", 7}}));
    EXPECT_EQ(out.json()["messages"][1]["transactionId"], r["push_results"][1]["transaction_id"]);
    EXPECT_EQ(state_of(c, id, pid)["rows"][0]["value"], (json{{"sum", 6}}));
}

TEST(Streams, EveryFailureRollsTheWholeCycleBack) {
    auto c = client();
    const auto name = unique_name("fail"), source = unique_name("fail-src"), sink = unique_name("fail-sink");
    const auto id = register_query(c, name, source, sink);
    configure_queue(c, sink, {{"maxSize", 2}});
    push_payloads(c, sink, "p", {json("old-1")});
    auto msgs = popped(c, source, name, 3);
    ASSERT_EQ(msgs.size(), 3u);
    const std::string pid = msgs[0]["partitionId"];
    // A first cycle leaves state, a lane and a sink message to compare against.
    auto first = post_ok(c, "/streams/v1/cycle",
                         {{"query_id", id},
                          {"partition_id", pid},
                          {"consumer_group", group_of(name)},
                          {"state_ops", {{{"type", "upsert"}, {"key", "k"}, {"value", 1}}}},
                          {"ack", {{"transactionId", msgs[0]["transactionId"]}, {"leaseId", msgs[0]["leaseId"]}}},
                          {"release_lease", false}});
    ASSERT_EQ(first["success"], true) << first;

    const json good_ops = {{{"type", "upsert"}, {"key", "k"}, {"value", 2}}, {{"type", "upsert"}, {"key", "n"}, {"value", 1}}};
    const json good_push = {{{"queue", sink}, {"partition", "p"}, {"payload", "new"}}};
    const json good_ack = ack_of(msgs[2]);
    // No partition's id, naming the source partition's shard (its low bits) as partition ids do.
    const std::string no_partition = std::to_string(std::stoll(pid) + 1024LL * 1000000);
    auto cycle = [&](const json& patch) {
        json body{{"query_id", id},       {"partition_id", pid},  {"consumer_group", group_of(name)},
                  {"state_ops", good_ops}, {"push_items", good_push}, {"ack", good_ack}};
        body.update(patch);
        return body;
    };
    const std::vector<std::pair<json, std::string>> cases{
        {cycle({{"state_ops", {{{"type", "upsert"}, {"key", "k"}, {"value", 3}}, {{"type", "merge"}, {"key", "k"}}}}}),
         "state_ops[1].type must be \"upsert\" or \"delete\""},
        {cycle({{"state_ops", {{{"type", "upsert"}, {"key", "k"}}}}}), "state_ops[0].value is required for an upsert"},
        {cycle({{"query_id", "01234567-89ab-4def-8123-456789abcdef"}}),
         "unknown query 01234567-89ab-4def-8123-456789abcdef"},
        {cycle({{"query_id", "not-a-query"}}), "unknown query not-a-query"},
        {cycle({{"partition_id", no_partition}}),
         "partition " + no_partition + " is not a partition of the source queue " + source},
        {cycle({{"ack", {{"transactionId", msgs[2]["transactionId"]}, {"leaseId", "01234567-89ab-4def-8123-456789abcdef"}}}}),
         "Invalid or expired lease"},
        {cycle({{"ack", {{"transactionId", "no-such-message"}}}}),
         "the acknowledged message (transactionId no-such-message) is not in the span of group " + group_of(name) +
             " on partition " + pid},
        {cycle({{"ack", {{"transactionId", msgs[0]["transactionId"]}, {"status", "dlq"}}}}),
         "the acknowledgement of transactionId " + msgs[0]["transactionId"].get<std::string>() +
             " failed: already committed"},
        {cycle({{"ack", {{"transactionId", msgs[2]["transactionId"]}, {"status", "retry"}}}}),
         "ack.status 'retry' is unknown; use completed, success, failed or dlq"},
        {cycle({{"push_items", {{{"payload", 1}}}}}), "push_items[0].queue is required"},
        {cycle({{"push_items", {{{"queue", sink}, {"partition", "p"}, {"payload", 1}}, {{"queue", sink}, {"partition", "p"}, {"payload", 2}}}}}),
         "queue " + sink + " is full: 1 messages not yet consumed, maxSize 2"},
        {cycle({{"release_lease", "no"}}), "release_lease must be a boolean"},
        {cycle({{"consumer_group", 3}}), "consumer_group must be a string"},
    };
    const std::string before = tables(id, source, sink);
    for (const auto& [body, error] : cases) {
        auto r = c.post("/streams/v1/cycle", body);
        ASSERT_EQ(r.status, 200) << body.dump() << " " << r.body;
        auto j = r.json();
        EXPECT_EQ(j["success"], false) << body.dump();
        EXPECT_EQ(j.value("error", ""), error) << body.dump();
        EXPECT_EQ(j["state_ops_applied"], 0);
        EXPECT_EQ(j["push_results"], json::array());
        EXPECT_EQ(j["ack_result"], nullptr);
        EXPECT_EQ(j["query_id"], body["query_id"]);
        EXPECT_EQ(j["partition_id"], body["partition_id"]);
        EXPECT_EQ(tables(id, source, sink), before) << "after " << body.dump();
    }
    // The same cycle without its fault applies whole.
    auto ok = post_ok(c, "/streams/v1/cycle", cycle(json::object()));
    EXPECT_EQ(ok["success"], true) << ok;
    EXPECT_NE(tables(id, source, sink), before);

    // 400 only for the envelope.
    for (const auto& [body, error] :
         std::vector<std::pair<std::string, std::string>>{{"[]", "request body must be a JSON object"},
                                                          {"{\"partition_id\":\"1\"}", "query_id is required and must be a string"},
                                                          {"{\"query_id\":\"" + id + "\",\"partition_id\":1}",
                                                           "partition_id is required and must be a string"}}) {
        auto r = c.post("/streams/v1/cycle", body);
        EXPECT_EQ(r.status, 400) << body;
        EXPECT_EQ(r.json().value("error", ""), error) << body;
    }
}

TEST(Streams, ARetriedCycleAfterALostAnswerPushesNothingTwice) {
    auto c = client();
    const auto name = unique_name("retry"), source = unique_name("retry-src"), sink = unique_name("retry-sink");
    const auto id = register_query(c, name, source, sink);
    auto msgs = popped(c, source, name, 2);
    ASSERT_EQ(msgs.size(), 2u);
    const std::string pid = msgs[0]["partitionId"];
    auto cycle_of = [&](const json& m) {
        return json{{"query_id", id},
                    {"partition_id", pid},
                    {"consumer_group", group_of(name)},
                    {"state_ops", {{{"type", "upsert"}, {"key", "last"}, {"value", m["data"]}}}},
                    {"push_items", {{{"queue", sink}, {"partition", "p"}, {"payload", "a"}}, {{"queue", sink}, {"partition", "p"}, {"payload", "b"}}}},
                    {"ack", {{"transactionId", m["transactionId"]}}},
                    {"release_lease", false}};
    };
    auto first = post_ok(c, "/streams/v1/cycle", cycle_of(msgs[0]));
    ASSERT_EQ(first["success"], true) << first;
    // The answer was lost: the client sends the same cycle again. Its ack is a noop: nothing of
    // it is applied, and it says so.
    const std::string before = tables(id, source, sink);
    auto again = post_ok(c, "/streams/v1/cycle", cycle_of(msgs[0]));
    ASSERT_EQ(again["success"], true) << again;
    EXPECT_EQ(first["applied"], true);
    EXPECT_EQ(again["applied"], false);
    EXPECT_EQ(again["state_ops_applied"], 0);
    EXPECT_EQ(again["push_results"], json::array());
    EXPECT_EQ(again["ack_result"]["lease_released"], false);
    EXPECT_EQ(tables(id, source, sink), before);
    for (int i = 0; i < 2; ++i) EXPECT_EQ(first["push_results"][i]["status"], "queued");
    EXPECT_NE(first["push_results"][0]["transaction_id"], first["push_results"][1]["transaction_id"]);
    // The next message's cycle derives other ids.
    auto next = post_ok(c, "/streams/v1/cycle", cycle_of(msgs[1]));
    ASSERT_EQ(next["success"], true) << next;
    EXPECT_EQ(next["push_results"][0]["status"], "queued");
    EXPECT_EQ(data_value("SELECT string_agg(payload::text, ',' ORDER BY \"offset\") FROM queen.messages "
                                "WHERE queue = " + quote(sink)),
              "\"a\",\"b\",\"a\",\"b\"");
}

TEST(Streams, AKeptLeaseThatExpiresCountsNoAttempt) {
    auto c = client();
    const auto name = unique_name("kept"), source = unique_name("kept-src");
    const auto id = register_query(c, name, source, "");
    auto msgs = popped(c, source, name, 3, {{"leaseTime", 1}, {"retryLimit", 0}});
    ASSERT_EQ(msgs.size(), 3u);
    const std::string pid = msgs[0]["partitionId"];
    // Commit a prefix and keep the lease; then, three times over, keep each new lease with an ack
    // of that prefix again (a noop): every expiry is a deferral.
    const json first_tx = msgs[0]["transactionId"];
    for (int round = 0; round < 3; ++round) {
        auto r = post_ok(c, "/streams/v1/cycle",
                         {{"query_id", id},
                          {"partition_id", pid},
                          {"consumer_group", group_of(name)},
                          {"ack", {{"transactionId", first_tx}, {"leaseId", msgs[0]["leaseId"]}}},
                          {"release_lease", false}});
        ASSERT_EQ(r["success"], true) << r;
        EXPECT_EQ(r["ack_result"]["lease_released"], false);
        http_reply again;
        ASSERT_TRUE(eventually([&] {
            again = pop(c, source, "batch=3&wait=false&consumerGroup=" + group_of(name));
            return again.status == 200;
        }));
        msgs = again.json()["messages"];
        ASSERT_EQ(msgs.size(), 2u) << again.body;
        EXPECT_EQ(msgs[0]["data"], (json{{"n", 2}})) << "round " << round;
    }
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id "
                       "WHERE q.name = " + quote(source)),
              0);
    // A lease that expires without being kept counts its attempt: with retryLimit 0 the head
    // goes to the dead letters when the partition is taken over.
    http_reply after;
    ASSERT_TRUE(eventually([&] {
        after = pop(c, source, "batch=3&wait=false&consumerGroup=" + group_of(name));
        return after.status == 200;
    }));
    EXPECT_EQ(after.json()["messages"][0]["data"], (json{{"n", 3}})) << after.body;
    EXPECT_EQ(data_value("SELECT reason FROM queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id "
                                "WHERE q.name = " + quote(source)),
              "lease_expired");
}

TEST(Streams, AFailedAckDeadLettersTheMessageAndReleasesTheLease) {
    auto c = client();
    const auto name = unique_name("dlq"), source = unique_name("dlq-src");
    const auto id = register_query(c, name, source, "");
    auto msgs = popped(c, source, name, 3);
    const std::string pid = msgs[0]["partitionId"];
    auto r = post_ok(c, "/streams/v1/cycle",
                     {{"query_id", id},
                      {"partition_id", pid},
                      {"consumer_group", group_of(name)},
                      {"ack", {{"transactionId", msgs[1]["transactionId"]}, {"leaseId", msgs[1]["leaseId"]},
                               {"status", "failed"}}}});
    ASSERT_EQ(r["success"], true) << r;
    EXPECT_EQ(r["ack_result"]["dlq"], true);
    EXPECT_EQ(r["ack_result"]["lease_released"], true);
    EXPECT_EQ(data_value("SELECT error_message || ':' || msg_offset FROM queen.dead_letters d "
                                "JOIN queen.queues q ON q.id = d.queue_id WHERE q.name = " + quote(source)),
              "Streaming cycle reported failure:2");
    // The cursor moved onto the dead-lettered message: the next pop starts after it.
    auto next = pop(c, source, "batch=3&wait=false&consumerGroup=" + group_of(name));
    ASSERT_EQ(next.status, 200) << next.body;
    ASSERT_EQ(next.json()["messages"].size(), 1u);
    EXPECT_EQ(next.json()["messages"][0]["data"], (json{{"n", 3}}));
}

TEST(Streams, MetricsCountCyclesByResultStateOpsSinkPushesAndLatency) {
    auto c = client();
    const auto name = unique_name("metrics"), source = unique_name("metrics-src"), sink = unique_name("metrics-sink");
    const auto id = register_query(c, name, source, sink);
    auto msgs = popped(c, source, name, 1);
    const std::string pid = msgs[0]["partitionId"];
    auto scrape = [&] {
        auto r = c.get("/metrics/prometheus");
        EXPECT_EQ(r.status, 200);
        return parse_exposition(r.body);
    };
    auto value = [](const std::vector<sample>& s, const std::string& family, const labels& l) {
        return value_of(s, family, l).value_or(0);
    };
    const auto before = scrape();
    auto ok = post_ok(c, "/streams/v1/cycle",
                      {{"query_id", id},
                       {"partition_id", pid},
                       {"consumer_group", group_of(name)},
                       {"state_ops",
                        {{{"type", "upsert"}, {"key", "a"}, {"value", 1}},
                         {{"type", "upsert"}, {"key", "b"}, {"value", 2}},
                         {{"type", "delete"}, {"key", "a"}}}},
                       {"push_items", {{{"queue", sink}, {"partition", "p"}, {"payload", 1}}}},
                       {"ack", ack_of(msgs[0])}});
    ASSERT_EQ(ok["success"], true) << ok;
    auto failed = post_ok(c, "/streams/v1/cycle",
                          {{"query_id", id}, {"partition_id", pid}, {"state_ops", {{{"type", "merge"}, {"key", "a"}}}}});
    ASSERT_EQ(failed["success"], false);
    auto rolled_back = post_ok(c, "/streams/v1/cycle",
                               {{"query_id", id}, {"partition_id", pid}, {"ack", {{"transactionId", "nowhere"}}}});
    ASSERT_EQ(rolled_back["success"], false);
    const auto after = scrape();
    auto delta = [&](const std::string& family, const labels& l) { return value(after, family, l) - value(before, family, l); };
    EXPECT_EQ(delta("queen_stream_cycles_total", {{"result", "committed"}}), 1);
    EXPECT_EQ(delta("queen_stream_cycles_total", {{"result", "failed"}}), 2);
    EXPECT_EQ(delta("queen_stream_state_ops_total", {{"type", "upsert"}}), 2);
    EXPECT_EQ(delta("queen_stream_state_ops_total", {{"type", "delete"}}), 1);
    EXPECT_EQ(delta("queen_stream_sink_pushes_total", {}), 1);
    // The committed cycle and the one that reached the database and rolled back are timed.
    EXPECT_EQ(delta("queen_stream_cycle_seconds_count", {}), 2);
    EXPECT_EQ(delta("queen_messages_published_total", {{"queue", sink}}), 1);
    EXPECT_EQ(delta("queen_messages_acked_total", {{"queue", source}, {"consumer_group", group_of(name)}}), 1);
}

}  // namespace
}  // namespace queen::test
