// Tenancy on the administration and stream routes: listings show only the caller's queues under
// their own names; consumer groups, dead letters, the message browser, traces and stream queries
// of the same name are each tenant's own.
//
// Tenancy (docs/tenancy.md): two tenants with the same queue, partition and transaction names
// use one broker and one database, and neither reaches the other's messages, cursors or leases.
// The other files of these suites: tenancy_delivery, _admin, _observability and _claims_test.cpp.
#include "auth_support.hpp"
#include "tenancy_support.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace queen::test {
namespace {

using namespace tenancy_support;
using nlohmann::json;
using namespace std::chrono_literals;

// The names a listing shows, in order.
std::vector<std::string> names_in(const json& listing, const char* array, const char* field = "name") {
    std::vector<std::string> out;
    for (const auto& q : listing[array]) out.push_back(q[field].get<std::string>());
    return out;
}

TEST(Tenancy, ListingsShowOnlyTheCallersQueuesUnderTheirOwnNames) {
    broker_process b(cluster().conninfo(), tenancy_env());
    auto c = client_of(b);
    const auto ns = unique_name("tenancy-ns");
    const auto shared = unique_name("tenancy-shared"), own = unique_name("tenancy-own");
    for (const auto& [tenant, queue] : std::vector<std::pair<std::string, std::string>>{
             {"acme", shared}, {"globex", shared}, {"globex", own}}) {
        const json cfg{{"queue", queue}, {"namespace", ns}, {"task", ns + "-" + tenant}};
        ASSERT_EQ(as_tenant(c, tenant, "POST", "/api/v1/configure", cfg.dump()).status, 200);
        ASSERT_EQ(as_tenant(c, tenant, "POST", "/api/v1/push", push_items(queue, tenant, 2).dump()).status, 201);
    }
    refresh_stats(c);

    auto listed = as_tenant(c, "acme", "GET", "/api/v1/resources/queues?namespace=" + ns);
    ASSERT_EQ(listed.status, 200) << listed.body;
    EXPECT_EQ(names_in(listed.json(), "queues"), (std::vector<std::string>{shared}));
    EXPECT_EQ(listed.json()["total"], 1);
    EXPECT_EQ(listed.json()["queues"][0]["messages"]["total"], 2);
    auto globex_listed = as_tenant(c, "globex", "GET", "/api/v1/resources/queues?namespace=" + ns);
    EXPECT_EQ(names_in(globex_listed.json(), "queues"), (std::vector<std::string>{own, shared}));
    auto status_listed = as_tenant(c, "acme", "GET", "/api/v1/status/queues?namespace=" + ns);
    ASSERT_EQ(status_listed.status, 200) << status_listed.body;
    EXPECT_EQ(names_in(status_listed.json(), "queues"), (std::vector<std::string>{shared}));
    auto by_name = as_tenant(c, "globex", "GET", "/api/v1/status/queues?queue=" + own);
    EXPECT_EQ(names_in(by_name.json(), "queues"), (std::vector<std::string>{own}));
    EXPECT_EQ(names_in(as_tenant(c, "acme", "GET", "/api/v1/status/queues?queue=" + own).json(), "queues"),
              std::vector<std::string>{});

    // Tasks are per tenant here: acme sees its own only.
    auto tasks = as_tenant(c, "acme", "GET", "/api/v1/resources/tasks");
    ASSERT_EQ(tasks.status, 200) << tasks.body;
    std::vector<std::string> ours;
    for (const auto& t : names_in(tasks.json(), "tasks"))
        if (t.starts_with(ns)) ours.push_back(t);
    EXPECT_EQ(ours, (std::vector<std::string>{ns + "-acme"}));
    auto namespaces = as_tenant(c, "acme", "GET", "/api/v1/resources/namespaces");
    const json namespace_list = namespaces.json();
    for (const auto& n : namespace_list["namespaces"]) {
        if (n["name"] == ns) {
            EXPECT_EQ(n["queues"], 1);
        }
    }

    // One queue: acme's own, under its name; another tenant's answers as unknown.
    auto detail = as_tenant(c, "acme", "GET", "/api/v1/resources/queues/" + shared);
    ASSERT_EQ(detail.status, 200) << detail.body;
    EXPECT_EQ(detail.json()["name"], shared);
    EXPECT_EQ(detail.json()["totals"]["total"], 2);
    auto status_one = as_tenant(c, "acme", "GET", "/api/v1/status/queues/" + shared);
    ASSERT_EQ(status_one.status, 200) << status_one.body;
    EXPECT_EQ(status_one.json()["queue"]["name"], shared);
    EXPECT_EQ(status_one.json()["totals"]["messages"]["total"], 2);
    auto unknown = as_tenant(c, "acme", "GET", "/api/v1/resources/queues/" + own);
    EXPECT_EQ(unknown.status, 404);
    EXPECT_EQ(auth_support::error_of(unknown), "Queue not found");
    EXPECT_EQ(as_tenant(c, "acme", "GET", "/api/v1/status/queues/" + own).status, 404);

    // acme deletes its queue; globex's of the same name stays whole.
    auto deleted = as_tenant(c, "acme", "DELETE", "/api/v1/resources/queues/" + shared);
    ASSERT_EQ(deleted.status, 200) << deleted.body;
    EXPECT_EQ(deleted.json()["queue"], shared);
    EXPECT_EQ(deleted.json()["existed"], true);
    EXPECT_EQ(as_tenant(c, "acme", "DELETE", "/api/v1/resources/queues/" + own).json()["existed"], false);
    EXPECT_EQ(stored(key_of("acme", shared)), "");
    EXPECT_EQ(stored(key_of("globex", shared)), "globex:2");
    EXPECT_EQ(stored(key_of("globex", own)), "globex:2");
}

TEST(Tenancy, AConsumerGroupOfTheSameNameIsATenantsOwn) {
    broker_process b(cluster().conninfo(), tenancy_env());
    auto c = client_of(b);
    const auto q = unique_name("tenancy-groups");
    const auto group = unique_name("billing");
    for (const std::string tenant : {"acme", "globex"}) {
        ASSERT_EQ(as_tenant(c, tenant, "POST", "/api/v1/push", push_items(q, tenant, 3).dump()).status, 201);
        auto popped = as_tenant(c, tenant, "GET", "/api/v1/pop/queue/" + q + "?wait=false&autoAck=true&consumerGroup=" + group);
        ASSERT_EQ(tenants_in(popped), (std::vector<std::string>{tenant})) << popped.body;
    }
    refresh_stats(c);

    const auto rows_of = [&](const std::string& tenant) {
        auto listed = as_tenant(c, tenant, "GET", "/api/v1/consumer-groups");
        EXPECT_EQ(listed.status, 200) << listed.body;
        std::vector<std::string> out;
        const json rows = listed.json();  // one element per (group, queue)
        for (const auto& g : rows) {
            if (g["name"] == group) out.push_back(g["queueName"].get<std::string>());
        }
        return out;
    };
    EXPECT_EQ(rows_of("acme"), (std::vector<std::string>{q}));
    auto detail = as_tenant(c, "acme", "GET", "/api/v1/consumer-groups/" + group);
    ASSERT_EQ(detail.status, 200) << detail.body;
    EXPECT_NE(detail.body.find(q), std::string::npos);
    EXPECT_EQ(detail.body.find("globex"), std::string::npos) << detail.body;
    auto lagging = as_tenant(c, "acme", "GET", "/api/v1/consumer-groups/lagging?minLagSeconds=0");
    ASSERT_EQ(lagging.status, 200) << lagging.body;
    EXPECT_EQ(lagging.body.find("globex"), std::string::npos) << lagging.body;

    // acme's seek, subscription rewrite and deletion touch its own registration only.
    auto seek = as_tenant(c, "acme", "POST", "/api/v1/consumer-groups/" + group + "/queues/" + q + "/seek",
                          R"({"toEnd":true})");
    ASSERT_EQ(seek.status, 200) << seek.body;
    EXPECT_EQ(seek.json()["queueName"], q);
    auto rewrite = as_tenant(c, "acme", "POST", "/api/v1/consumer-groups/" + group + "/subscription",
                             R"({"subscriptionTimestamp":"2026-01-01T00:00:00Z"})");
    ASSERT_EQ(rewrite.status, 200) << rewrite.body;
    EXPECT_EQ(rewrite.json()["rowsUpdated"], 1);
    auto globex_next = as_tenant(c, "globex", "GET",
                                 "/api/v1/pop/queue/" + q + "?wait=false&batch=10&consumerGroup=" + group);
    EXPECT_EQ(tenants_in(globex_next), (std::vector<std::string>{"globex", "globex"}));
    EXPECT_EQ(as_tenant(c, "acme", "GET", "/api/v1/pop/queue/" + q + "?wait=false&consumerGroup=" + group).status, 204);
    auto removed = as_tenant(c, "acme", "DELETE", "/api/v1/consumer-groups/" + group);
    ASSERT_EQ(removed.status, 200) << removed.body;
    EXPECT_EQ(removed.json()["metadataDeleted"], true);
    EXPECT_EQ(rows_of("acme"), std::vector<std::string>{});
    EXPECT_EQ(rows_of("globex"), (std::vector<std::string>{q}));
    // Registered on every database that serves the queue (over shards: each shard, once).
    EXPECT_EQ(data_value("SELECT count(*) FROM queen.consumer_groups WHERE consumer_group = " + quote(group) +
                                " AND queue_name = " + quote(key_of("globex", q))),
              "1");
}

// Pops one message of the tenant's queue and dead-letters it; its transaction id.
std::string dead_letter_one(http_client& c, const std::string& tenant, const std::string& queue) {
    auto popped = as_tenant(c, tenant, "GET", "/api/v1/pop/queue/" + queue + "?wait=false");
    EXPECT_EQ(popped.status, 200) << popped.body;
    const json m = popped.json()["messages"][0];
    const json ack{{"transactionId", m["transactionId"]},
                   {"partitionId", m["partitionId"]},
                   {"leaseId", m["leaseId"]},
                   {"status", "dlq"},
                   {"error", "from " + tenant}};
    auto acked = as_tenant(c, tenant, "POST", "/api/v1/ack", ack.dump());
    EXPECT_EQ(acked.json()["success"], true) << acked.body;
    return m["transactionId"];
}

TEST(Tenancy, DeadLettersAreListedRequeuedAndPurgedPerTenant) {
    broker_process b(cluster().conninfo(), tenancy_env());
    auto c = client_of(b);
    const auto q = unique_name("tenancy-dlq");
    for (const std::string tenant : {"acme", "globex"}) {
        ASSERT_EQ(as_tenant(c, tenant, "POST", "/api/v1/push", push_items(q, tenant, 2).dump()).status, 201);
        dead_letter_one(c, tenant, q);
        dead_letter_one(c, tenant, q);
    }
    const auto listed_errors = [&](const std::string& tenant, const std::string& query) {
        auto listed = as_tenant(c, tenant, "GET", "/api/v1/dlq?" + query);
        EXPECT_EQ(listed.status, 200) << listed.body;
        std::vector<std::string> out;
        const json page = listed.json();
        for (const auto& m : page["messages"]) {
            EXPECT_EQ(m["queue"], q);
            out.push_back(m["errorMessage"].get<std::string>());
        }
        EXPECT_EQ(page["total"], out.size()) << listed.body;
        return out;
    };
    EXPECT_EQ(listed_errors("acme", "queue=" + q), (std::vector<std::string>{"from acme", "from acme"}));
    EXPECT_EQ(listed_errors("globex", "queue=" + q), (std::vector<std::string>{"from globex", "from globex"}));
    for (const auto& e : listed_errors("acme", "limit=1000")) EXPECT_EQ(e, "from acme");

    auto requeued = as_tenant(c, "acme", "POST", "/api/v1/dlq/requeue", json{{"queue", q}, {"limit", 1}}.dump());
    ASSERT_EQ(requeued.status, 200) << requeued.body;
    EXPECT_EQ(requeued.json()["requeued"], 1);
    EXPECT_EQ(requeued.json()["remaining"], 1);
    EXPECT_EQ(requeued.json()["messages"][0]["queue"], q);
    auto purged = as_tenant(c, "acme", "DELETE", "/api/v1/dlq?all=true");
    ASSERT_EQ(purged.status, 200) << purged.body;
    EXPECT_EQ(purged.json()["purged"], 1);
    EXPECT_EQ(listed_errors("acme", "queue=" + q), std::vector<std::string>{});
    EXPECT_EQ(listed_errors("globex", "queue=" + q), (std::vector<std::string>{"from globex", "from globex"}));
    auto again = as_tenant(c, "acme", "GET", "/api/v1/pop/queue/" + q + "?wait=false");
    EXPECT_EQ(tenants_in(again), (std::vector<std::string>{"acme"}));
}

TEST(Tenancy, MessagesAndTracesOfAnotherTenantAreUnknown) {
    broker_process b(cluster().conninfo(), tenancy_env());
    auto c = client_of(b);
    const auto q = unique_name("tenancy-browse");
    const auto trace_name = unique_name("order-flow");
    std::map<std::string, json> first;  // per tenant: its first message as pushed
    for (const std::string tenant : {"acme", "globex"}) {
        auto pushed = as_tenant(c, tenant, "POST", "/api/v1/push", push_items(q, tenant, 2).dump());
        ASSERT_EQ(pushed.status, 201) << pushed.body;
        first[tenant] = pushed.json()[0];
        const json trace{{"partitionId", first[tenant]["partition_id"]},
                         {"transactionId", first[tenant]["transaction_id"]},
                         {"eventType", "info"},
                         {"traceNames", {trace_name, trace_name + "-" + tenant}},
                         {"data", {{"by", tenant}}}};
        auto recorded = as_tenant(c, tenant, "POST", "/api/v1/traces", trace.dump());
        ASSERT_EQ(recorded.status, 201) << recorded.body;
    }
    const std::string globex_pid = first["globex"]["partition_id"], globex_tx = first["globex"]["transaction_id"];

    // The browser lists acme's messages only, under its own queue name.
    auto browsed = as_tenant(c, "acme", "GET", "/api/v1/messages?queue=" + q);
    ASSERT_EQ(browsed.status, 200) << browsed.body;
    const json page = browsed.json();
    ASSERT_EQ(page["messages"].size(), 2u) << browsed.body;
    for (const auto& m : page["messages"]) {
        EXPECT_EQ(m["queue"], q);
        EXPECT_NE(m["partitionId"], globex_pid);
    }
    auto everything = as_tenant(c, "acme", "GET", "/api/v1/messages?limit=1000");
    EXPECT_EQ(everything.body.find("\"partitionId\":\"" + globex_pid + "\""), std::string::npos);
    auto in_queue = as_tenant(c, "acme", "GET", "/api/v1/status/queues/" + q + "/messages");
    ASSERT_EQ(in_queue.status, 200) << in_queue.body;
    EXPECT_EQ(in_queue.json().size(), 2u);

    // One message of globex, named by acme: unknown; its deletion changes nothing.
    auto detail = as_tenant(c, "acme", "GET", "/api/v1/messages/" + globex_pid + "/" + globex_tx);
    EXPECT_EQ(detail.status, 404) << detail.body;
    EXPECT_EQ(auth_support::error_of(detail), "Message not found");
    auto deleted = as_tenant(c, "acme", "DELETE", "/api/v1/messages/" + globex_pid + "/" + globex_tx);
    EXPECT_EQ(deleted.status, 404) << deleted.body;
    auto own = as_tenant(c, "globex", "GET", "/api/v1/messages/" + globex_pid + "/" + globex_tx);
    ASSERT_EQ(own.status, 200) << own.body;
    EXPECT_EQ(own.json()["queue"], q);
    EXPECT_FALSE(own.json().contains("deletedAt"));

    // Traces: none of globex's reach acme, and acme cannot add one to globex's message.
    const json foreign_trace{{"partitionId", globex_pid}, {"transactionId", globex_tx}, {"eventType", "info"},
                             {"data", {{"by", "acme"}}}};
    EXPECT_EQ(as_tenant(c, "acme", "POST", "/api/v1/traces", foreign_trace.dump()).status, 404);
    auto of_message = as_tenant(c, "acme", "GET", "/api/v1/traces/" + globex_pid + "/" + globex_tx);
    ASSERT_EQ(of_message.status, 200);
    EXPECT_EQ(of_message.json()["traces"].size(), 0u);
    EXPECT_EQ(as_tenant(c, "globex", "GET", "/api/v1/traces/" + globex_pid + "/" + globex_tx).json()["traces"].size(),
              1u);
    auto by_name = as_tenant(c, "acme", "GET", "/api/v1/traces/by-name/" + trace_name);
    ASSERT_EQ(by_name.status, 200) << by_name.body;
    const json named = by_name.json();
    ASSERT_EQ(named["traces"].size(), 1u) << by_name.body;
    EXPECT_EQ(named["traces"][0]["queue_name"], q);
    EXPECT_EQ(named["traces"][0]["data"]["by"], "acme");
    auto names = as_tenant(c, "acme", "GET", "/api/v1/traces/names?limit=1000");
    EXPECT_NE(names.body.find(trace_name + "-acme"), std::string::npos);
    EXPECT_EQ(names.body.find(trace_name + "-globex"), std::string::npos);
}

TEST(Tenancy, StreamQueriesOfTheSameNameAreEachTenantsOwn) {
    broker_process b(cluster().conninfo(), tenancy_env());
    auto c = client_of(b);
    const auto query = unique_name("tenancy-wc"), source = unique_name("tenancy-src"), sink = unique_name("tenancy-sink");
    std::map<std::string, std::string> ids;
    std::map<std::string, json> popped;
    for (const std::string tenant : {"acme", "globex"}) {
        const json reg{{"name", query}, {"source_queue", source}, {"sink_queue", sink}, {"config_hash", "h"}};
        auto r = as_tenant(c, tenant, "POST", "/streams/v1/queries", reg.dump());
        ASSERT_EQ(r.status, 200) << r.body;
        EXPECT_EQ(r.json()["fresh"], true);
        EXPECT_EQ(r.json()["name"], query);
        ids[tenant] = r.json()["query_id"];
        ASSERT_EQ(as_tenant(c, tenant, "POST", "/api/v1/push", push_items(source, tenant, 1).dump()).status, 201);
        auto p = as_tenant(c, tenant, "GET",
                           "/api/v1/pop/queue/" + source + "?wait=false&consumerGroup=streams." + query);
        ASSERT_EQ(p.status, 200) << p.body;
        popped[tenant] = p.json()["messages"][0];
    }
    EXPECT_NE(ids["acme"], ids["globex"]);

    const auto cycle = [&](const std::string& tenant, const std::string& query_id, const json& message) {
        const json body{{"query_id", query_id},
                        {"partition_id", message["partitionId"]},
                        {"consumer_group", "streams." + query},
                        {"state_ops", {{{"type", "upsert"}, {"key", "count"}, {"value", {{"by", tenant}}}}}},
                        {"push_items", {{{"queue", sink}, {"partition", "p1"}, {"payload", {{"tenant", tenant}}}}}},
                        {"ack", {{"transactionId", message["transactionId"]}, {"leaseId", message["leaseId"]}}}};
        return as_tenant(c, tenant, "POST", "/streams/v1/cycle", body.dump());
    };
    // acme names globex's query: an unknown query, nothing applied anywhere.
    auto foreign = cycle("acme", ids["globex"], popped["globex"]);
    ASSERT_EQ(foreign.status, 200) << foreign.body;
    EXPECT_EQ(foreign.json()["success"], false) << foreign.body;
    EXPECT_EQ(foreign.json()["error"], "unknown query " + ids["globex"]);
    EXPECT_EQ(foreign.json()["error"], "unknown query " + ids["globex"]);
    const json state_of_globex{{"query_id", ids["globex"]}, {"partition_id", popped["globex"]["partitionId"]}};
    auto peek = as_tenant(c, "acme", "POST", "/streams/v1/state/get", state_of_globex.dump());
    ASSERT_EQ(peek.status, 200) << peek.body;
    EXPECT_EQ(peek.json()["rows"].size(), 0u);

    for (const std::string tenant : {"acme", "globex"}) {
        auto own = cycle(tenant, ids[tenant], popped[tenant]);
        ASSERT_EQ(own.status, 200) << own.body;
        EXPECT_EQ(own.json()["success"], true) << own.body;
        EXPECT_EQ(own.json()["queueName"], source);
        EXPECT_EQ(own.json()["push_results"][0]["queueName"], sink);
    }
    auto state = as_tenant(c, "globex", "POST", "/streams/v1/state/get", state_of_globex.dump());
    ASSERT_EQ(state.json()["rows"].size(), 1u) << state.body;
    EXPECT_EQ(state.json()["rows"][0]["value"]["by"], "globex");
    auto sunk = as_tenant(c, "acme", "GET", "/api/v1/pop/queue/" + sink + "?wait=false&batch=10");
    EXPECT_EQ(tenants_in(sunk), (std::vector<std::string>{"acme"}));

    auto listed = as_tenant(c, "acme", "GET", "/api/v1/resources/streams");
    ASSERT_EQ(listed.status, 200) << listed.body;
    std::vector<std::string> names;
    const json streams = listed.json();
    for (const auto& q : streams["streams"]) {
        if (q["name"] == query) {
            names.push_back(q["queryId"]);
            EXPECT_EQ(q["sourceQueue"], source);
            EXPECT_EQ(q["stateRows"], 1);
        }
    }
    EXPECT_EQ(names, (std::vector<std::string>{ids["acme"]}));
}

}  // namespace
}  // namespace queen::test
