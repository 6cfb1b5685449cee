// The tenancy matrix (docs/tenancy.md): generated from the route table. Two tenants hold the
// same queue, partition, group, trace and stream-query names; tenant "a" drives every tenant
// route, aimed at tenant "b"'s ids wherever a route takes one. No answer may hold anything of
// "b" (its marker, its tenant name), "b"'s stored state must not change, and the counts a
// tenant reads are its own. A tenant route without a recipe here fails the test, so a new
// route cannot be added without saying how tenancy covers it. It runs twice: tenants named by
// the header, and by the token's claim (where operator routes must also refuse a tenant).
#include "auth_support.hpp"
#include "api/route_table.hpp"
#include "stats_refresh.hpp"

#include <gtest/gtest.h>

#include <functional>

namespace queen::test {
namespace {

using nlohmann::json;

const std::string header = "X-Tenant";
constexpr char separator = '\x1f';

// One tenant's fixture: what it created, and the ids a foreign caller aims at.
struct tenant_fixture {
    std::string name, token;
    std::string partition_id, transaction_id, lease_id, query_id, message_id;
    int messages_in_q = 0;
};

// The names both tenants use.
struct shared_names {
    std::string q, q2, partition = "p1", group, trace, query, ns, task;
};

class matrix_client {
public:
    matrix_client(http_client& c, bool claims) : c_(c), claims_(claims) {}
    http_reply as(const tenant_fixture& t, const std::string& method, const std::string& target,
                  const std::string& body = "") {
        std::map<std::string, std::string> h;
        if (claims_)
            h["Authorization"] = "Bearer " + t.token;
        else
            h[header] = t.name;
        if (!body.empty()) h["Content-Type"] = "application/json";
        return c_.request(method, target, body, h);
    }
    http_reply admin(const std::string& method, const std::string& target, const std::string& body = "") {
        std::map<std::string, std::string> h;
        if (claims_) h["Authorization"] = "Bearer " + admin_token;
        if (!body.empty()) h["Content-Type"] = "application/json";
        return c_.request(method, target, body, h);
    }
    std::string admin_token;

private:
    http_client& c_;
    bool claims_;
};

json must_json(const http_reply& r, const std::string& what) {
    EXPECT_LT(r.status, 300) << what << ": " << r.body;
    return r.body.empty() ? json() : r.json();
}

// Creates the tenant's queues, messages, a leased message, a dead letter, a trace and a stream
// query with state, all under the shared names.
tenant_fixture make_fixture(matrix_client& m, tenant_fixture t, const shared_names& n, int messages) {
    const std::string marker = "marker-" + t.name;
    must_json(m.as(t, "POST", "/api/v1/configure",
                   json{{"queue", n.q}, {"namespace", n.ns}, {"task", n.task}}.dump()),
              "configure");
    must_json(m.as(t, "POST", "/api/v1/configure", json{{"queue", n.q2}}.dump()), "configure q2");
    json items = json::array();
    for (int i = 0; i < messages; ++i)
        items.push_back({{"queue", n.q},
                         {"partition", n.partition},
                         {"transactionId", "tx-" + std::to_string(i)},
                         {"payload", {{"marker", marker}, {"i", i}}}});
    items.push_back({{"queue", n.q2}, {"payload", {{"marker", marker}}}});
    must_json(m.as(t, "POST", "/api/v1/push", json{{"items", items}}.dump()), "push");
    t.messages_in_q = messages;

    // A group's lease on the first message.
    const json popped = must_json(
        m.as(t, "GET", "/api/v1/pop/queue/" + n.q + "?wait=false&batch=1&consumerGroup=" + n.group), "pop");
    const json first = popped["messages"][0];
    t.partition_id = first["partitionId"];
    t.transaction_id = first["transactionId"];
    t.lease_id = first["leaseId"];
    t.message_id = first["id"];
    // Queue mode: the first message dead-lettered.
    const json qm = must_json(m.as(t, "GET", "/api/v1/pop/queue/" + n.q + "?wait=false&batch=1"), "pop queue mode");
    const json dl = qm["messages"][0];
    must_json(m.as(t, "POST", "/api/v1/ack",
                   json{{"transactionId", dl["transactionId"]},
                        {"partitionId", dl["partitionId"]},
                        {"leaseId", dl["leaseId"]},
                        {"status", "dlq"},
                        {"error", marker}}
                       .dump()),
              "dead letter");
    must_json(m.as(t, "POST", "/api/v1/traces",
                   json{{"partitionId", t.partition_id},
                        {"transactionId", t.transaction_id},
                        {"traceNames", {n.trace}},
                        {"data", {{"marker", marker}}}}
                       .dump()),
              "trace");
    // A stream query with one state row.
    const json reg = must_json(m.as(t, "POST", "/streams/v1/queries",
                                    json{{"name", n.query}, {"source_queue", n.q}, {"sink_queue", n.q2},
                                         {"config_hash", "h-" + t.name}}
                                        .dump()),
                               "register");
    t.query_id = reg["query_id"];
    const json sp = must_json(
        m.as(t, "GET", "/api/v1/pop/queue/" + n.q + "?wait=false&batch=1&consumerGroup=streams." + n.query),
        "stream pop");
    const json sm = sp["messages"][0];
    const json cycled = must_json(
        m.as(t, "POST", "/streams/v1/cycle",
             json{{"query_id", t.query_id},
                  {"partition_id", sm["partitionId"]},
                  {"consumer_group", "streams." + n.query},
                  {"state_ops", {{{"type", "upsert"}, {"key", "k"}, {"value", {{"marker", marker}}}}}},
                  {"ack", {{"transactionId", sm["transactionId"]}, {"leaseId", sm["leaseId"]}}}}
                 .dump()),
        "cycle");
    EXPECT_EQ(cycled["success"], true) << cycled.dump();
    return t;
}

// Everything stored for a tenant, as one text: a change of any of it shows.
std::string fingerprint(const std::string& tenant) {
    const std::string like = quote(tenant + separator + "%");
    const std::string queues = "(SELECT id FROM queen.queues WHERE tenant = " + quote(tenant) + ")";
    const std::string partitions = "(SELECT id FROM queen.log_partitions WHERE queue_id IN " + queues + ")";
    // Over shards each shard database's fingerprint, in shard order.
    std::string all;
    for (const auto& one : data_rows(
        "SELECT concat_ws(' | ',"
        " (SELECT string_agg(name || ':' || lease_time || ':' || coalesce(namespace, '') || ':' || updated_at, ',' "
        "   ORDER BY name) FROM queen.queues WHERE tenant = " + quote(tenant) + "),"
        " (SELECT string_agg(partition_id || ':' || \"offset\" || ':' || transaction_id, ',' ORDER BY partition_id, "
        "   \"offset\") FROM queen.messages WHERE queue LIKE " + like + "),"
        " (SELECT string_agg(c.partition_id || ':' || c.consumer_group || ':' || c.committed || ':' || "
        "   coalesce(c.lease_id::text, '-') || ':' || coalesce(c.lease_expires_at::text, '-'), ',' ORDER BY "
        "   c.partition_id, c.consumer_group) FROM (SELECT DISTINCT ON (partition_id, consumer_group) * FROM "
        "   queen.log_consumers WHERE partition_id IN " + partitions +
        "   ORDER BY partition_id, consumer_group, version DESC) c),"
        " (SELECT string_agg(queue_name || ':' || consumer_group || ':' || coalesce(subscription_at::text, '-'), ',' "
        "   ORDER BY queue_name, consumer_group) FROM queen.consumer_groups WHERE queue_name LIKE " + like + "),"
        " (SELECT 'dlq ' || count(*) FROM queen.dead_letters WHERE queue_id IN " + queues + "),"
        " (SELECT 'tombstones ' || count(*) FROM queen.message_tombstones WHERE partition_id IN " + partitions + "),"
        " (SELECT 'traces ' || count(*) FROM queen.message_traces WHERE partition_id IN " + partitions + "),"
        " (SELECT string_agg(name || ':' || config_hash || ':' || updated_at, ',') FROM queen.stream_queries "
        "   WHERE name LIKE " + like + "),"
        " (SELECT 'state ' || count(*) || ':' || coalesce(string_agg(s.value::text, ','), '') FROM queen.stream_state "
        "   s JOIN queen.stream_queries q ON q.id = s.query_id WHERE q.name LIKE " + like + "))"))
        all += (all.empty() ? "" : " || ") + one;
    return all;
}

// What tenant `a` sends to one route, aimed at tenant `b` where the route takes an id; and an
// optional check of the answer's counts.
struct recipe {
    std::string method, target, body;
    std::function<void(const json&)> check;  // the answer, when it is JSON
};

// The sum of `field` over the rows of `array` (the answer itself when empty).
long long pushed_in(const json& j, const std::string& array, const std::string& field) {
    long long sum = 0;
    for (const auto& row : array.empty() ? j : j[array]) sum += row[field].get<long long>();
    return sum;
}

using recipe_book = std::map<std::string, std::function<recipe()>>;  // "METHOD /path/pattern"

recipe_book recipes(const shared_names& n, const tenant_fixture& a, const tenant_fixture& b) {
    const std::string q = n.q, q2 = n.q2, g = n.group;
    const json foreign_ack{{"transactionId", b.transaction_id}, {"partitionId", b.partition_id}, {"leaseId", b.lease_id}};
    recipe_book r;
    r["POST /api/v1/configure"] = [=] {
        return recipe{"POST", "/api/v1/configure", json{{"queue", q}, {"options", {{"leaseTime", 77}}}}.dump(), {}};
    };
    r["POST /api/v1/push"] = [=] {
        // A transaction id only b has used under the same names: a's own dedup stores it.
        return recipe{"POST", "/api/v1/push",
                      json{{"items", {{{"queue", q}, {"partition", n.partition}, {"transactionId", "tx-5"},
                                       {"payload", 1}}}}}
                          .dump(),
                      [](const json& j) { EXPECT_EQ(j[0]["status"], "queued") << j.dump(); }};
    };
    r["GET /api/v1/pop/queue/:queue"] = [=] {
        return recipe{"GET", "/api/v1/pop/queue/" + q + "?wait=false&batch=100", "", {}};
    };
    r["GET /api/v1/pop/queue/:queue/partition/:partition"] = [=] {
        return recipe{"GET", "/api/v1/pop/queue/" + q + "/partition/" + n.partition + "?wait=false&batch=100&consumerGroup=" + g,
                      "", {}};
    };
    r["POST /api/v1/ack"] = [=] {
        return recipe{"POST", "/api/v1/ack", foreign_ack.dump(),
                      [](const json& j) { EXPECT_EQ(j["success"], false) << j.dump(); }};
    };
    r["POST /api/v1/ack/batch"] = [=] {
        json acks = foreign_ack;
        acks["consumerGroup"] = g;
        return recipe{"POST", "/api/v1/ack/batch", json{{"acknowledgments", {acks}}}.dump(),
                      [](const json& j) { EXPECT_EQ(j[0]["success"], false) << j.dump(); }};
    };
    r["POST /api/v1/transaction"] = [=] {
        json ack = foreign_ack;
        ack["type"] = "ack";
        ack["consumerGroup"] = g;
        return recipe{"POST", "/api/v1/transaction", json{{"operations", {ack}}, {"requiredLeases", {b.lease_id}}}.dump(),
                      [](const json& j) { EXPECT_EQ(j["success"], false) << j.dump(); }};
    };
    r["POST /streams/v1/queries"] = [=] {
        return recipe{"POST", "/streams/v1/queries",
                      json{{"name", n.query}, {"source_queue", q}, {"config_hash", "other"}, {"reset", true}}.dump(), {}};
    };
    r["POST /streams/v1/state/get"] = [=] {
        return recipe{"POST", "/streams/v1/state/get",
                      json{{"query_id", b.query_id}, {"partition_id", b.partition_id}}.dump(),
                      [](const json& j) { EXPECT_EQ(j["rows"].size(), 0u) << j.dump(); }};
    };
    r["POST /streams/v1/cycle"] = [=] {
        return recipe{"POST", "/streams/v1/cycle",
                      json{{"query_id", b.query_id},
                           {"partition_id", b.partition_id},
                           {"state_ops", {{{"type", "upsert"}, {"key", "k"}, {"value", 0}}}}}
                          .dump(),
                      [](const json& j) { EXPECT_EQ(j["success"], false) << j.dump(); }};
    };
    r["GET /api/v1/resources/queues"] = [=] {
        return recipe{"GET", "/api/v1/resources/queues?namespace=" + n.ns, "",
                      [q](const json& j) {
                          ASSERT_EQ(j["queues"].size(), 1u) << j.dump();
                          EXPECT_EQ(j["queues"][0]["name"], q);
                      }};
    };
    r["GET /api/v1/resources/overview"] = [=] {
        return recipe{"GET", "/api/v1/resources/overview", "",
                      [](const json& j) { EXPECT_EQ(j["queues"], 2) << j.dump(); }};
    };
    r["GET /api/v1/resources/queues/:queue"] = [=] {
        return recipe{"GET", "/api/v1/resources/queues/" + q, "", [a](const json& j) {
                          std::int64_t total = 0;
                          for (const auto& p : j["partitions"]) total += p["stats"]["total"].get<std::int64_t>();
                          EXPECT_EQ(total, a.messages_in_q) << j.dump();
                      }};
    };
    r["DELETE /api/v1/resources/queues/:queue"] = [=] {
        return recipe{"DELETE", "/api/v1/resources/queues/" + q2, "", {}};
    };
    r["GET /api/v1/resources/namespaces"] = [=] {
        return recipe{"GET", "/api/v1/resources/namespaces", "", [n](const json& j) {
                          for (const auto& x : j["namespaces"]) {
                              if (x["name"] == n.ns) {
                                  EXPECT_EQ(x["queues"], 1) << j.dump();
                              }
                          }
                      }};
    };
    r["GET /api/v1/resources/tasks"] = [=] {
        return recipe{"GET", "/api/v1/resources/tasks", "", [n](const json& j) {
                          for (const auto& x : j["tasks"]) {
                              if (x["name"] == n.task) {
                                  EXPECT_EQ(x["queues"], 1) << j.dump();
                              }
                          }
                      }};
    };
    r["GET /api/v1/resources/streams"] = [=] {
        return recipe{"GET", "/api/v1/resources/streams", "", [a, n](const json& j) {
                          for (const auto& x : j["streams"]) {
                              if (x["name"] == n.query) {
                                  EXPECT_EQ(x["queryId"], a.query_id) << j.dump();
                              }
                          }
                      }};
    };
    r["GET /api/v1/status"] = [=] {
        return recipe{"GET", "/api/v1/status", "", [a](const json& j) {
                          EXPECT_EQ(j["messages"]["total"], a.messages_in_q + 1) << j.dump();
                          EXPECT_EQ(j["queues"].size(), 2u) << j.dump();
                      }};
    };
    r["GET /api/v1/status/queues"] = [=] {
        return recipe{"GET", "/api/v1/status/queues?namespace=" + n.ns, "",
                      [](const json& j) { EXPECT_EQ(j["queues"].size(), 1u) << j.dump(); }};
    };
    r["GET /api/v1/status/analytics"] = [=] {
        return recipe{"GET", "/api/v1/status/analytics?interval=minute", "",
                      [a](const json& j) { EXPECT_EQ(pushed_in(j, "dataPoints", "messages"), a.messages_in_q + 1); }};
    };
    r["GET /api/v1/status/queues/:queue"] = [=] {
        return recipe{"GET", "/api/v1/status/queues/" + q, "",
                      [a](const json& j) { EXPECT_EQ(j["totals"]["messages"]["total"], a.messages_in_q) << j.dump(); }};
    };
    r["GET /api/v1/analytics/queue-lag"] = [=] { return recipe{"GET", "/api/v1/analytics/queue-lag", "", {}}; };
    r["GET /api/v1/analytics/queue-ops"] = [=] {
        return recipe{"GET", "/api/v1/analytics/queue-ops", "",
                      [a](const json& j) { EXPECT_EQ(pushed_in(j, "series", "pushMessages"), a.messages_in_q + 1); }};
    };
    r["GET /api/v1/analytics/queue-parked-replicas"] = [=] {
        return recipe{"GET", "/api/v1/analytics/queue-parked-replicas", "", {}};
    };
    r["GET /api/v1/analytics/retention"] = [=] { return recipe{"GET", "/api/v1/analytics/retention", "", {}}; };
    r["POST /api/v1/lease/:leaseId/extend"] = [=] {
        return recipe{"POST", "/api/v1/lease/" + b.lease_id + "/extend", R"({"seconds":900})",
                      [](const json& j) { EXPECT_EQ(j[0]["success"], false) << j.dump(); }};
    };
    r["GET /api/v1/consumer-groups"] = [=] {
        return recipe{"GET", "/api/v1/consumer-groups", "", [g](const json& j) {
                          int rows = 0;
                          for (const auto& x : j) rows += x["name"] == g ? 1 : 0;
                          EXPECT_EQ(rows, 1) << j.dump();
                      }};
    };
    r["GET /api/v1/consumer-groups/lagging"] = [=] {
        return recipe{"GET", "/api/v1/consumer-groups/lagging?minLagSeconds=0", "", [g](const json& j) {
                          int rows = 0;
                          for (const auto& x : j) rows += x["consumer_group"] == g ? 1 : 0;
                          EXPECT_EQ(rows, 1) << j.dump();
                      }};
    };
    r["GET /api/v1/consumer-groups/:group"] = [=] {
        return recipe{"GET", "/api/v1/consumer-groups/" + g, "",
                      [q](const json& j) { EXPECT_EQ(j[q]["partitions"].size(), 1u) << j.dump(); }};
    };
    r["DELETE /api/v1/consumer-groups/:group"] = [=] {
        return recipe{"DELETE", "/api/v1/consumer-groups/" + g, "", {}};
    };
    r["DELETE /api/v1/consumer-groups/:group/queues/:queue"] = [=] {
        return recipe{"DELETE", "/api/v1/consumer-groups/" + g + "/queues/" + q, "", {}};
    };
    r["POST /api/v1/consumer-groups/:group/queues/:queue/seek"] = [=] {
        return recipe{"POST", "/api/v1/consumer-groups/" + g + "/queues/" + q + "/seek", R"({"toEnd":true})", {}};
    };
    r["POST /api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek"] = [=] {
        return recipe{"POST", "/api/v1/consumer-groups/" + g + "/queues/" + q + "/partitions/" + n.partition + "/seek",
                      "", {}};
    };
    r["POST /api/v1/consumer-groups/:group/subscription"] = [=] {
        return recipe{"POST", "/api/v1/consumer-groups/" + g + "/subscription",
                      R"({"subscriptionTimestamp":"2020-01-01T00:00:00Z"})", {}};
    };
    r["GET /api/v1/messages"] = [=] {
        return recipe{"GET", "/api/v1/messages?limit=1000", "",
                      [a](const json& j) { EXPECT_EQ(j["messages"].size(), a.messages_in_q + 1u) << j.dump(); }};
    };
    r["GET /api/v1/messages/:partitionId/:transactionId"] = [=] {
        return recipe{"GET", "/api/v1/messages/" + b.partition_id + "/" + b.transaction_id, "", {}};
    };
    r["DELETE /api/v1/messages/:partitionId/:transactionId"] = [=] {
        return recipe{"DELETE", "/api/v1/messages/" + b.partition_id + "/" + b.transaction_id, "", {}};
    };
    r["GET /api/v1/status/queues/:queue/messages"] = [=] {
        return recipe{"GET", "/api/v1/status/queues/" + q + "/messages", "",
                      [a](const json& j) { EXPECT_EQ(j.size(), static_cast<std::size_t>(a.messages_in_q)) << j.dump(); }};
    };
    r["GET /api/v1/dlq"] = [=] {
        return recipe{"GET", "/api/v1/dlq?limit=1000", "",
                      [](const json& j) { EXPECT_EQ(j["total"], 1) << j.dump(); }};
    };
    r["DELETE /api/v1/dlq"] = [=] { return recipe{"DELETE", "/api/v1/dlq?all=true", "", {}}; };
    r["POST /api/v1/dlq/requeue"] = [=] { return recipe{"POST", "/api/v1/dlq/requeue", R"({"all":true})", {}}; };
    r["POST /api/v1/traces"] = [=] {
        return recipe{"POST", "/api/v1/traces",
                      json{{"partitionId", b.partition_id}, {"transactionId", b.transaction_id}, {"data", 1}}.dump(),
                      {}};
    };
    r["GET /api/v1/traces/names"] = [=] {
        return recipe{"GET", "/api/v1/traces/names?limit=1000", "", [n](const json& j) {
                          for (const auto& x : j["trace_names"]) {
                              if (x["name"] == n.trace) {
                                  EXPECT_EQ(x["count"], 1) << j.dump();
                              }
                          }
                      }};
    };
    r["GET /api/v1/traces/by-name/:name"] = [=] {
        return recipe{"GET", "/api/v1/traces/by-name/" + n.trace, "",
                      [](const json& j) { EXPECT_EQ(j["traces"].size(), 1u) << j.dump(); }};
    };
    r["GET /api/v1/traces/:partitionId/:transactionId"] = [=] {
        return recipe{"GET", "/api/v1/traces/" + b.partition_id + "/" + b.transaction_id, "",
                      [](const json& j) { EXPECT_EQ(j["traces"].size(), 0u) << j.dump(); }};
    };
    return r;
}

std::string method_name(http::bhttp::verb v) {
    return std::string(http::bhttp::to_string(v));
}

// The order recipes run in: reads first, then writes, then what deletes a's own state.
int phase(const recipe& r) {
    if (r.method == "GET") return 0;
    if (r.method == "DELETE") return 2;
    return 1;
}

void run_matrix(bool claims) {
    std::map<std::string, std::string> env{{"QUEEN_TENANCY_HEADER", header}, {"QUEEN_METRICS_FLUSH_MS", "100"}};
    if (claims) {
        env["QUEEN_TENANCY_CLAIM"] = "tenant";
        env["JWT_ENABLED"] = "true";
        env["JWT_SECRET"] = auth_support::secret;
    }
    broker_process broker(cluster().conninfo(), env);
    auto c = client_of(broker);
    matrix_client m(c, claims);
    const auto token = [](const std::string& role, const std::optional<std::string>& tenant) {
        json cl = jwt::claims("sub-" + role, role);
        if (tenant) cl["tenant"] = *tenant;
        return jwt::token("HS256", cl, nullptr, auth_support::secret);
    };
    m.admin_token = token("admin", std::nullopt);

    const auto suffix = unique_name(claims ? "claims" : "header");
    shared_names n{"orders", "audit", "p1", "billing", "flow-" + suffix, "wordcount", "ns-" + suffix, "task-" + suffix};
    tenant_fixture a, b;
    a.name = "a-" + suffix;
    b.name = "b-" + suffix;
    // The matrix's deletions need admin: a's token has it, and still names a's tenant.
    a.token = token("admin", a.name);
    b.token = token("read-write", b.name);
    a = make_fixture(m, a, n, 3);
    b = make_fixture(m, b, n, 7);
    ASSERT_TRUE(refresh_stats_taken([&] { return m.admin("POST", "/api/v1/stats/refresh"); }))
        << "every stats refresh was skipped";
    const std::string before = fingerprint(b.name);
    ASSERT_NE(before.find("dlq 1"), std::string::npos) << before;

    // The activity the analytics read reaches the database at the next flush.
    ASSERT_TRUE(eventually([&] {
        const auto r = m.as(a, "GET", "/api/v1/status/analytics?interval=minute");
        return r.status == 200 && pushed_in(r.json(), "dataPoints", "messages") == a.messages_in_q + 1 &&
               pushed_in(m.as(b, "GET", "/api/v1/status/analytics?interval=minute").json(), "dataPoints",
                         "messages") == b.messages_in_q + 1;
    }));
    const auto book = recipes(n, a, b);
    std::vector<std::pair<std::string, recipe>> plan;
    int tenant_routes = 0;
    for (const auto& route : api::route_table()) {
        const std::string key = method_name(route.method) + " " + std::string(route.path);
        if (route.tenancy == api::tenancy_rule::operator_) {
            if (!claims) continue;
            // A tenant's token never reaches an operator route.
            std::string target(route.path);
            auto plain = token("read-write", a.name);
            std::map<std::string, std::string> h{{"Authorization", "Bearer " + plain}};
            EXPECT_EQ(c.request(method_name(route.method), target, "", h).status, 403) << key;
            continue;
        }
        if (route.tenancy != api::tenancy_rule::tenant) continue;
        ++tenant_routes;
        auto it = book.find(key);
        if (it == book.end()) {
            ADD_FAILURE() << "route " << key << " has no tenancy recipe in tenancy_matrix_test.cpp";
            continue;
        }
        plan.emplace_back(key, it->second());
    }
    std::stable_sort(plan.begin(), plan.end(),
                     [](const auto& x, const auto& y) { return phase(x.second) < phase(y.second); });
    for (const auto& [key, r] : plan) {
        SCOPED_TRACE(key);
        const auto reply = m.as(a, r.method, r.target, r.body);
        EXPECT_LT(reply.status, 500) << reply.body;
        EXPECT_EQ(reply.body.find(b.name), std::string::npos) << "b's tenant name in: " << reply.body;
        EXPECT_EQ(reply.body.find("marker-" + b.name), std::string::npos) << reply.body;
        if (r.check && reply.status < 300 && !reply.body.empty()) r.check(reply.json());
        EXPECT_EQ(fingerprint(b.name), before) << "b's stored state changed";
    }
    EXPECT_GT(tenant_routes, 40);
}

TEST(TenancyMatrix, EveryTenantRouteKeepsTenantsApartByHeader) {
    run_matrix(false);
}

TEST(TenancyMatrix, EveryTenantRouteKeepsTenantsApartByClaim) {
    run_matrix(true);
}

}  // namespace
}  // namespace queen::test
