// Tenancy on the delivery routes (docs/tenancy.md): two tenants with the same queue, partition
// and transaction names push, pop, ack, extend leases and run transactions through one broker
// and one database, and neither reaches the other's messages, cursors or leases; the tenant
// comes from the header or the token's claim; the default tenant owns the queues from before.
#include "auth_support.hpp"

#include <gtest/gtest.h>

#include <future>
#include <map>
#include <set>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const std::string header = "X-Tenant";

http_reply as_tenant(http_client& c, const std::string& tenant, const std::string& method, const std::string& target,
                     const std::string& body = "", const std::string& token = "") {
    std::map<std::string, std::string> headers;
    if (!tenant.empty()) headers[header] = tenant;
    if (!token.empty()) headers["Authorization"] = "Bearer " + token;
    if (!body.empty()) headers["Content-Type"] = "application/json";
    return c.request(method, target, body, headers);
}

// A new stats snapshot, taken by this request: a refresh that another session's (a broker's
// timer) holds the lock of answers skipped, and is asked again.
void refresh_stats(http_client& c) {
    ASSERT_TRUE(eventually([&] {
        const auto r = as_tenant(c, "", "POST", "/api/v1/stats/refresh");
        return r.status == 200 && !r.json().value("skipped", false);
    })) << "every stats refresh was skipped";
}

json push_items(const std::string& queue, const std::string& tenant, int n, const std::string& txid_prefix = "tx-") {
    json items = json::array();
    for (int i = 0; i < n; ++i)
        items.push_back({{"queue", queue},
                         {"partition", "p1"},
                         {"transactionId", txid_prefix + std::to_string(i)},
                         {"payload", {{"tenant", tenant}, {"i", i}}}});
    return json{{"items", items}};
}

// The payload tenants of a pop's messages, in order.
std::vector<std::string> tenants_in(const http_reply& popped) {
    std::vector<std::string> out;
    if (popped.status != 200) return out;
    const json answer = popped.json();
    for (const auto& m : answer["messages"]) out.push_back(m["data"]["tenant"].get<std::string>());
    return out;
}

// What the database holds of a stored key: "<tenant or null>:<messages>" ("" when no queue has
// it; over shards, where the queue's row is on several databases, they must agree on its tenant).
std::string stored(const std::string& key) {
    const auto tenants = data_rows("SELECT coalesce(tenant, 'null') FROM queen.queues WHERE name = " + quote(key));
    if (tenants.empty()) return "";
    const std::set<std::string> distinct(tenants.begin(), tenants.end());
    if (distinct.size() != 1) return "the databases disagree on its tenant";
    return *distinct.begin() + ":" +
           std::to_string(data_sum("SELECT count(*) FROM queen.messages WHERE queue = " + quote(key)));
}

std::string key_of(const std::string& tenant, const std::string& queue) {
    return tenant + '\x1f' + queue;
}

std::map<std::string, std::string> tenancy_env() {
    return {{"QUEEN_TENANCY_HEADER", header}};
}

TEST(Tenancy, TwoTenantsWithTheSameNamesEachSeeOnlyTheirOwnMessages) {
    broker_process b(cluster().conninfo(), tenancy_env());
    auto c = client_of(b);
    const auto q = unique_name("tenancy-same");
    ASSERT_EQ(as_tenant(c, "acme", "POST", "/api/v1/configure", json{{"queue", q}, {"options", {{"leaseTime", 60}}}}.dump())
                  .status,
              200);
    auto configured =
        as_tenant(c, "globex", "POST", "/api/v1/configure", json{{"queue", q}, {"options", {{"leaseTime", 90}}}}.dump());
    ASSERT_EQ(configured.status, 200) << configured.body;
    EXPECT_EQ(configured.json()["queue"], q);

    // The same transaction ids in both: each tenant's dedup is its own.
    auto a = as_tenant(c, "acme", "POST", "/api/v1/push", push_items(q, "acme", 3).dump());
    auto g = as_tenant(c, "globex", "POST", "/api/v1/push", push_items(q, "globex", 2).dump());
    ASSERT_EQ(a.status, 201) << a.body;
    ASSERT_EQ(g.status, 201) << g.body;
    for (const auto& item : a.json()) {
        EXPECT_EQ(item["status"], "queued");
        EXPECT_EQ(item["queueName"], q);
    }
    for (const auto& item : g.json()) EXPECT_EQ(item["status"], "queued");
    EXPECT_EQ(stored(key_of("acme", q)), "acme:3");
    EXPECT_EQ(stored(key_of("globex", q)), "globex:2");
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.queues WHERE name = " + quote(q)), 0);
    EXPECT_EQ(data_value("SELECT lease_time FROM queen.queues WHERE name = " + quote(key_of("globex", q))), "90");

    auto acme_pop = as_tenant(c, "acme", "GET", "/api/v1/pop/queue/" + q + "?batch=10&wait=false");
    auto globex_pop = as_tenant(c, "globex", "GET", "/api/v1/pop/queue/" + q + "/partition/p1?batch=10&wait=false");
    ASSERT_EQ(acme_pop.status, 200) << acme_pop.body;
    ASSERT_EQ(globex_pop.status, 200) << globex_pop.body;
    EXPECT_EQ(tenants_in(acme_pop), (std::vector<std::string>{"acme", "acme", "acme"}));
    EXPECT_EQ(tenants_in(globex_pop), (std::vector<std::string>{"globex", "globex"}));
    EXPECT_EQ(acme_pop.json()["queue"], q);
    const json acme_first = acme_pop.json()["messages"][0];
    const json globex_first = globex_pop.json()["messages"][0];
    const std::string globex_lease = globex_pop.json()["leaseId"];

    // acme names globex's message, partition and lease: answered as unknown ones, nothing moves.
    const auto cursor_of_globex = [&] {
        return data_value(
            "SELECT lc.committed || '/' || coalesce(lc.lease_id::text, '-') FROM queen.log_consumers lc "
            "JOIN queen.log_partitions p ON p.id = lc.partition_id JOIN queen.queues q ON q.id = p.queue_id "
            "WHERE q.name = " +
            quote(key_of("globex", q)) + " AND p.name = 'p1' ORDER BY lc.version DESC LIMIT 1");
    };
    const auto before = cursor_of_globex();
    const json foreign_ack{{"transactionId", globex_first["transactionId"]},
                           {"partitionId", globex_first["partitionId"]},
                           {"leaseId", globex_lease}};
    const json unknown_ack{{"transactionId", globex_first["transactionId"]},
                           {"partitionId", "987654321987"},
                           {"leaseId", globex_lease}};
    auto foreign = as_tenant(c, "acme", "POST", "/api/v1/ack", foreign_ack.dump());
    auto unknown = as_tenant(c, "acme", "POST", "/api/v1/ack", unknown_ack.dump());
    ASSERT_EQ(foreign.status, 200) << foreign.body;
    EXPECT_EQ(foreign.json()["success"], false) << foreign.body;
    EXPECT_EQ(foreign.json()["error"], unknown.json()["error"]);
    auto batch = as_tenant(c, "acme", "POST", "/api/v1/ack/batch", json{{"acknowledgments", {foreign_ack}}}.dump());
    ASSERT_EQ(batch.status, 200) << batch.body;
    EXPECT_EQ(batch.json()[0]["success"], false);
    auto extended = as_tenant(c, "acme", "POST", "/api/v1/lease/" + globex_lease + "/extend", R"({"seconds":600})");
    ASSERT_EQ(extended.status, 200) << extended.body;
    EXPECT_EQ(extended.json()[0]["success"], false);
    EXPECT_EQ(extended.json()[0]["error"], "Lease not found");
    const json foreign_tx{{"operations",
                           {{{"type", "push"},
                             {"items", {{{"queue", q}, {"partition", "p1"}, {"payload", {{"tenant", "acme"}}}}}}},
                            {{"type", "ack"},
                             {"transactionId", globex_first["transactionId"]},
                             {"partitionId", globex_first["partitionId"]}}}}};
    auto tx = as_tenant(c, "acme", "POST", "/api/v1/transaction", foreign_tx.dump());
    ASSERT_EQ(tx.status, 200) << tx.body;
    EXPECT_EQ(tx.json()["success"], false) << tx.body;
    const json leased_tx{{"operations", {{{"type", "push"}, {"items", {{{"queue", q}, {"payload", {{"tenant", "acme"}}}}}}}}},
                         {"requiredLeases", {globex_lease}}};
    auto tx2 = as_tenant(c, "acme", "POST", "/api/v1/transaction", leased_tx.dump());
    ASSERT_EQ(tx2.status, 200) << tx2.body;
    EXPECT_EQ(tx2.json()["success"], false) << tx2.body;
    EXPECT_EQ(cursor_of_globex(), before);
    EXPECT_EQ(stored(key_of("acme", q)), "acme:3");

    // Each tenant's own ack, extension and transaction work.
    auto own = as_tenant(c, "globex", "POST", "/api/v1/lease/" + globex_lease + "/extend", R"({"seconds":600})");
    EXPECT_EQ(own.json()[0]["success"], true) << own.body;
    auto acked = as_tenant(c, "globex", "POST", "/api/v1/ack", foreign_ack.dump());
    EXPECT_EQ(acked.json()["success"], true) << acked.body;
    const json own_tx{{"operations",
                       {{{"type", "push"},
                         {"items", {{{"queue", q}, {"partition", "p1"}, {"payload", {{"tenant", "acme"}}}}}}},
                        {{"type", "ack"},
                         {"transactionId", acme_first["transactionId"]},
                         {"partitionId", acme_first["partitionId"]},
                         {"leaseId", acme_pop.json()["leaseId"]}}}}};
    auto tx3 = as_tenant(c, "acme", "POST", "/api/v1/transaction", own_tx.dump());
    ASSERT_EQ(tx3.status, 200) << tx3.body;
    EXPECT_EQ(tx3.json()["success"], true) << tx3.body;
    EXPECT_EQ(tx3.json()["results"][0]["queueName"], q);
    EXPECT_EQ(stored(key_of("acme", q)), "acme:4");
    EXPECT_NE(cursor_of_globex(), before);
}

TEST(Tenancy, TheDefaultTenantOwnsTheQueuesFromBeforeTenancy) {
    const auto q = unique_name("tenancy-before");
    {
        broker_process plain(cluster().conninfo());
        auto c = client_of(plain);
        ASSERT_EQ(c.request("POST", "/api/v1/push", push_items(q, "before", 2).dump(),
                            {{"Content-Type", "application/json"}})
                      .status,
                  201);
    }
    EXPECT_EQ(stored(q), "null:2");
    {
        broker_process b(cluster().conninfo(), tenancy_env());
        auto c = client_of(b);
        EXPECT_EQ(as_tenant(c, "acme", "GET", "/api/v1/pop/queue/" + q + "?wait=false").status, 204);
        auto popped = as_tenant(c, "default", "GET", "/api/v1/pop/queue/" + q + "?batch=10&wait=false&autoAck=true");
        ASSERT_EQ(popped.status, 200) << popped.body;
        EXPECT_EQ(tenants_in(popped), (std::vector<std::string>{"before", "before"}));
        // The default tenant's new queues are stored without a tenant too.
        const auto fresh = unique_name("tenancy-default-new");
        ASSERT_EQ(as_tenant(c, "default", "POST", "/api/v1/push", push_items(fresh, "default", 1).dump()).status, 201);
        EXPECT_EQ(stored(fresh), "null:1");
    }
    {
        // Renamed: the same queues now belong to acme, without a migration.
        auto env = tenancy_env();
        env["QUEEN_TENANCY_DEFAULT"] = "acme";
        broker_process b(cluster().conninfo(), env);
        auto c = client_of(b);
        ASSERT_EQ(as_tenant(c, "acme", "POST", "/api/v1/push", push_items(q, "acme", 1, "after-").dump()).status, 201);
        EXPECT_EQ(stored(q), "null:3");
        EXPECT_EQ(as_tenant(c, "default", "GET", "/api/v1/pop/queue/" + q + "?wait=false").status, 204);
        auto popped = as_tenant(c, "acme", "GET", "/api/v1/pop/queue/" + q + "?batch=10&wait=false");
        EXPECT_EQ(tenants_in(popped), (std::vector<std::string>{"acme"}));
    }
}

TEST(Tenancy, ARequestWithoutAValidTenantIsRefusedAndChangesNothing) {
    broker_process b(cluster().conninfo(), tenancy_env());
    auto c = client_of(b);
    const auto q = unique_name("tenancy-refused");
    auto missing = as_tenant(c, "", "POST", "/api/v1/push", push_items(q, "x", 1).dump());
    EXPECT_EQ(missing.status, 400);
    EXPECT_EQ(auth_support::error_of(missing), "missing tenant header X-Tenant");
    auto too_long = as_tenant(c, std::string(129, 't'), "GET", "/api/v1/pop/queue/" + q + "?wait=false");
    EXPECT_EQ(too_long.status, 400);
    EXPECT_EQ(auth_support::error_of(too_long), "tenant header X-Tenant is longer than 128 bytes");
    // A queue name holding the separator would name another tenant's key.
    json forged = push_items("globex\x1f" + q, "acme", 1);
    auto separator = as_tenant(c, "acme", "POST", "/api/v1/push", forged.dump());
    EXPECT_EQ(separator.status, 400) << separator.body;
    EXPECT_EQ(auth_support::error_of(separator), "items[0].queue must not hold the character U+001F while tenancy is on");
    auto pop_forged = as_tenant(c, "default", "GET", "/api/v1/pop/queue/globex%1F" + q + "?wait=false");
    EXPECT_EQ(pop_forged.status, 400) << pop_forged.body;
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.queues WHERE name LIKE " + quote("%" + q)), 0);
    // Routes outside a tenant need no header; without auth every caller may use them.
    EXPECT_EQ(as_tenant(c, "", "GET", "/api/v1/system/maintenance").status, 200);
    EXPECT_EQ(as_tenant(c, "", "GET", "/health").status, 200);
}

TEST(Tenancy, LongPollsWakeOnlyForTheirOwnTenantsMessages) {
    broker_process b(cluster().conninfo(), tenancy_env());
    const auto q = unique_name("tenancy-poll");
    auto waiting = std::async(std::launch::async, [&] {
        auto c = client_of(b);
        return as_tenant(c, "acme", "GET", "/api/v1/pop/queue/" + q + "?batch=10&wait=true&timeout=20000");
    });
    auto c = client_of(b);
    wait_parked(b, 1);
    ASSERT_EQ(as_tenant(c, "globex", "POST", "/api/v1/push", push_items(q, "globex", 2).dump()).status, 201);
    std::this_thread::sleep_for(300ms);
    ASSERT_EQ(as_tenant(c, "acme", "POST", "/api/v1/push", push_items(q, "acme", 1).dump()).status, 201);
    auto popped = waiting.get();
    ASSERT_EQ(popped.status, 200) << popped.body;
    EXPECT_EQ(tenants_in(popped), (std::vector<std::string>{"acme"}));
    auto rest = as_tenant(c, "globex", "GET", "/api/v1/pop/queue/" + q + "?batch=10&wait=false");
    EXPECT_EQ(tenants_in(rest), (std::vector<std::string>{"globex", "globex"}));
}

TEST(Tenancy, SpooledPushesDrainIntoTheirTenantsQueues) {
    broker_process b(cluster().conninfo(), tenancy_env());
    auto c = client_of(b);
    const auto q = unique_name("tenancy-spool");
    ASSERT_EQ(as_tenant(c, "", "POST", "/api/v1/system/maintenance", R"({"enabled":true})").status, 200);
    auto a = as_tenant(c, "acme", "POST", "/api/v1/push", push_items(q, "acme", 2).dump());
    auto g = as_tenant(c, "globex", "POST", "/api/v1/push", push_items(q, "globex", 3).dump());
    ASSERT_EQ(a.status, 201) << a.body;
    EXPECT_EQ(a.json()[0]["status"], "buffered");
    EXPECT_EQ(a.json()[0]["queueName"], q);
    ASSERT_EQ(g.status, 201) << g.body;
    ASSERT_EQ(as_tenant(c, "", "POST", "/api/v1/system/maintenance", R"({"enabled":false})").status, 200);
    ASSERT_TRUE(eventually([&] { return stored(key_of("globex", q)) == "globex:3"; })) << stored(key_of("globex", q));
    EXPECT_EQ(stored(key_of("acme", q)), "acme:2");
    auto popped = as_tenant(c, "acme", "GET", "/api/v1/pop/queue/" + q + "?batch=10&wait=false");
    EXPECT_EQ(tenants_in(popped), (std::vector<std::string>{"acme", "acme"}));
}

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

TEST(Tenancy, StatusAndAnalyticsCountOnlyTheCallersQueues) {
    auto env = tenancy_env();
    env["QUEEN_METRICS_FLUSH_MS"] = "100";
    broker_process b(cluster().conninfo(), env);
    auto c = client_of(b);
    const auto q = unique_name("tenancy-status");
    const std::map<std::string, int> pushed{{"acme", 3}, {"globex", 5}};
    for (const auto& [tenant, n] : pushed) {
        ASSERT_EQ(as_tenant(c, tenant, "POST", "/api/v1/push", push_items(q, tenant, n).dump()).status, 201);
        auto popped = as_tenant(c, tenant, "GET", "/api/v1/pop/queue/" + q + "?batch=1&wait=false&autoAck=true");
        ASSERT_EQ(popped.status, 200) << popped.body;
    }
    refresh_stats(c);
    // The activity counts reach the database at the next flush.
    const auto analytics_total = [&](const std::string& tenant) {
        auto points = as_tenant(c, tenant, "GET", "/api/v1/status/analytics?interval=minute&queue=" + q);
        EXPECT_EQ(points.status, 200) << points.body;
        long long sum = 0;
        const json body = points.json();
        for (const auto& p : body["dataPoints"]) sum += p["messages"].get<long long>();
        return sum;
    };
    ASSERT_TRUE(eventually([&] { return analytics_total("acme") == 3 && analytics_total("globex") == 5; }))
        << analytics_total("acme") << " " << analytics_total("globex");
    auto everything = as_tenant(c, "acme", "GET", "/api/v1/status/analytics?interval=minute");
    long long acme_all = 0;
    const json all_points = everything.json();
    for (const auto& p : all_points["dataPoints"]) acme_all += p["messages"].get<long long>();
    EXPECT_GE(acme_all, 3);
    EXPECT_EQ(everything.body.find("globex"), std::string::npos);

    auto status = as_tenant(c, "acme", "GET", "/api/v1/status?queue=" + q);
    ASSERT_EQ(status.status, 200) << status.body;
    const json st = status.json();
    EXPECT_EQ(st["messages"]["total"], 3) << status.body;
    EXPECT_EQ(st["workers"].size(), 0u);
    EXPECT_TRUE(st["errors"]["dbErrors"].is_null());
    ASSERT_EQ(st["queues"].size(), 1u);
    EXPECT_EQ(st["queues"][0]["name"], q);
    auto whole = as_tenant(c, "acme", "GET", "/api/v1/status");
    EXPECT_EQ(whole.body.find("globex"), std::string::npos) << whole.body;

    auto overview = as_tenant(c, "acme", "GET", "/api/v1/resources/overview");
    ASSERT_EQ(overview.status, 200) << overview.body;
    const json ov = overview.json();
    const auto acme_rows = data_rows("SELECT name FROM queen.queues WHERE tenant = 'acme'");
    const long long acme_queues = static_cast<long long>(std::set<std::string>(acme_rows.begin(), acme_rows.end()).size());
    EXPECT_EQ(ov["queues"], acme_queues);
    EXPECT_GE(ov["messages"]["total"].get<long long>(), 3);
    auto ops = as_tenant(c, "acme", "GET", "/api/v1/analytics/queue-ops");
    ASSERT_EQ(ops.status, 200) << ops.body;
    EXPECT_NE(ops.body.find("\"" + q + "\""), std::string::npos) << ops.body;
    EXPECT_EQ(ops.body.find("globex"), std::string::npos);
    for (const char* route : {"queue-lag", "queue-parked-replicas", "retention"}) {
        auto r = as_tenant(c, "acme", "GET", std::string("/api/v1/analytics/") + route);
        EXPECT_EQ(r.status, 200) << route << r.body;
        EXPECT_EQ(r.body.find("globex"), std::string::npos) << route;
    }
}

TEST(Tenancy, PrometheusPerQueueSeriesCarryTheTenant) {
    broker_process b(cluster().conninfo(), tenancy_env());
    auto c = client_of(b);
    const auto q = unique_name("tenancy-prom");
    ASSERT_EQ(as_tenant(c, "acme", "POST", "/api/v1/push", push_items(q, "acme", 2).dump()).status, 201);
    ASSERT_EQ(as_tenant(c, "default", "POST", "/api/v1/push", push_items(q, "default", 1).dump()).status, 201);
    auto scrape = as_tenant(c, "", "GET", "/metrics/prometheus");
    ASSERT_EQ(scrape.status, 200);
    EXPECT_NE(scrape.body.find("queen_messages_published_total{tenant=\"acme\",queue=\"" + q + "\"} 2"),
              std::string::npos)
        << scrape.body.substr(0, 4000);
    EXPECT_NE(scrape.body.find("queen_messages_published_total{tenant=\"default\",queue=\"" + q + "\"} 1"),
              std::string::npos);
    EXPECT_EQ(scrape.body.find('\x1f'), std::string::npos);
}

class TenancyClaims : public ::testing::Test {
protected:
    static std::map<std::string, std::string> env() {
        return {{"QUEEN_TENANCY_HEADER", header},
                {"QUEEN_TENANCY_CLAIM", "tenant"},
                {"JWT_ENABLED", "true"},
                {"JWT_SECRET", auth_support::secret}};
    }
    static std::string token(const std::string& role, const std::optional<std::string>& tenant) {
        json claims = jwt::claims("sub-" + role, role);
        if (tenant) claims["tenant"] = *tenant;
        return jwt::token("HS256", claims, nullptr, auth_support::secret);
    }
};

TEST_F(TenancyClaims, TheTokensClaimNamesTheTenantAndAContradictingHeaderIsRefused) {
    broker_process b(cluster().conninfo(), env());
    auto c = client_of(b);
    const auto q = unique_name("tenancy-claim");
    const auto acme = token("read-write", "acme"), globex = token("read-write", "globex");
    ASSERT_EQ(as_tenant(c, "", "POST", "/api/v1/push", push_items(q, "acme", 2).dump(), acme).status, 201);
    ASSERT_EQ(as_tenant(c, "globex", "POST", "/api/v1/push", push_items(q, "globex", 1).dump(), globex).status, 201);
    EXPECT_EQ(stored(key_of("acme", q)), "acme:2");
    EXPECT_EQ(stored(key_of("globex", q)), "globex:1");

    auto contradicted = as_tenant(c, "globex", "GET", "/api/v1/pop/queue/" + q + "?wait=false", "", acme);
    EXPECT_EQ(contradicted.status, 403);
    EXPECT_EQ(auth_support::error_of(contradicted), "tenant header X-Tenant differs from the token's tenant");
    auto unclaimed = as_tenant(c, "globex", "GET", "/api/v1/pop/queue/" + q + "?wait=false", "",
                               token("read-write", std::nullopt));
    EXPECT_EQ(unclaimed.status, 403);
    EXPECT_EQ(auth_support::error_of(unclaimed), "the token names no tenant (claim tenant)");

    auto popped = as_tenant(c, "", "GET", "/api/v1/pop/queue/" + q + "?batch=10&wait=false", "", globex);
    EXPECT_EQ(tenants_in(popped), (std::vector<std::string>{"globex"}));
    // An admin token without the claim names its tenant by the header.
    auto admin_pop = as_tenant(c, "acme", "GET", "/api/v1/pop/queue/" + q + "?batch=10&wait=false", "",
                               token("admin", std::nullopt));
    EXPECT_EQ(tenants_in(admin_pop), (std::vector<std::string>{"acme", "acme"}));
}

TEST_F(TenancyClaims, RoutesOverEveryTenantNeedAdmin) {
    broker_process b(cluster().conninfo(), env());
    auto c = client_of(b);
    const auto tenant_token = token("read-write", "acme");
    const auto admin = token("admin", std::nullopt);
    for (const char* target : {"/metrics", "/metrics/prometheus", "/api/v1/status/buffers",
                               "/api/v1/analytics/system-metrics",
                               "/api/v1/analytics/worker-metrics", "/api/v1/system/maintenance"}) {
        // Public by JWT_SKIP_PATHS or read-only without tenancy: with tenancy, admin only.
        EXPECT_EQ(as_tenant(c, "", "GET", target).status, 401) << target;
        EXPECT_EQ(as_tenant(c, "", "GET", target, "", tenant_token).status, 403) << target;
        EXPECT_EQ(as_tenant(c, "", "GET", target, "", admin).status, 200) << target;
    }
    EXPECT_EQ(as_tenant(c, "", "GET", "/health").status, 200);
}

}  // namespace
}  // namespace queen::test
