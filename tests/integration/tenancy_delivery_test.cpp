// Tenancy on the delivery routes: two tenants with the same names push, pop, ack, extend leases
// and run transactions, and neither reaches the other's messages, cursors or leases; the default
// tenant owns the queues from before tenancy; a request without a valid tenant is refused and
// changes nothing; long-polls wake for their own tenant's messages; spooled pushes drain into
// their tenant's queues.
//
// Tenancy (docs/tenancy.md): two tenants with the same queue, partition and transaction names
// use one broker and one database, and neither reaches the other's messages, cursors or leases.
// The other files of these suites: tenancy_delivery, _admin, _observability and _claims_test.cpp.
#include "auth_support.hpp"
#include "tenancy_support.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

using namespace tenancy_support;
using nlohmann::json;
using namespace std::chrono_literals;

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

}  // namespace
}  // namespace queen::test
