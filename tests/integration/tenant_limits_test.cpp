// Limits per tenant (config/tenant_limits.hpp, docs/tenancy.md "Limits per tenant"), each
// through a real broker with tenancy on: queues per tenant (checked in SQL, concurrent creations
// included), stored bytes per tenant (the stats snapshot), the request rate and parked
// long-polls per tenant. Past a limit the answer is 429 naming it, nothing is stored, and
// another tenant is not held back.
#include "auth_support.hpp"

#include <gtest/gtest.h>

#include <future>
#include <set>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace auth_support;
using namespace std::chrono_literals;

const std::string header = "X-Tenant";

http_reply as_tenant(http_client& c, const std::string& tenant, const std::string& method, const std::string& target,
                     const std::string& body = "") {
    std::map<std::string, std::string> headers{{header, tenant}};
    if (!body.empty()) headers["Content-Type"] = "application/json";
    return c.request(method, target, body, headers);
}

std::map<std::string, std::string> with_tenancy(std::map<std::string, std::string> env) {
    env["QUEEN_TENANCY_HEADER"] = header;
    return env;
}

// The tenant's queues by name (over shards a queue's row is on several databases).
std::set<std::string> queue_names_of(const std::string& tenant) {
    const auto rows = data_rows("SELECT queen.queue_local_name(name) FROM queen.queues WHERE tenant = " + quote(tenant));
    return {rows.begin(), rows.end()};
}

long long queues_of(const std::string& tenant) { return static_cast<long long>(queue_names_of(tenant).size()); }

long long messages_of(const std::string& tenant) {
    return data_sum("SELECT count(*) FROM queen.messages WHERE tenant = " + quote(tenant));
}

TEST(TenantLimits, ATenantHoldsAtMostMaxQueuesEvenWhenCreatingThemAtOnce) {
    broker_process b(database_url(), with_tenancy({{"QUEEN_TENANT_MAX_QUEUES", "3"}}));
    const auto acme = unique_name("lim-q-acme"), globex = unique_name("lim-q-globex");

    // Eight new queues at once, each by a push of one message: three are created.
    std::vector<std::future<http_reply>> pushes;
    for (int i = 0; i < 8; ++i)
        pushes.push_back(std::async(std::launch::async, [&, i] {
            auto c = client_of(b);
            return as_tenant(c, acme, "POST", "/api/v1/push", push_body("q" + std::to_string(i)));
        }));
    int created = 0, refused = 0;
    for (auto& f : pushes) {
        const auto r = f.get();
        if (r.status == 201) {
            ++created;
        } else {
            EXPECT_EQ(r.status, 429) << r.body;
            EXPECT_NE(error_of(r).find("QUEEN_TENANT_MAX_QUEUES is 3"), std::string::npos) << r.body;
            ++refused;
        }
    }
    EXPECT_EQ(created, 3);
    EXPECT_EQ(refused, 5);
    EXPECT_EQ(queues_of(acme), 3);
    EXPECT_EQ(messages_of(acme), 3);

    // configure of a new queue is refused the same way; an existing queue still takes pushes
    // and configure.
    auto c = client_of(b);
    auto more = as_tenant(c, acme, "POST", "/api/v1/configure", json{{"queue", "another"}}.dump());
    EXPECT_EQ(more.status, 429) << more.body;
    const auto names = queue_names_of(acme);
    ASSERT_FALSE(names.empty());
    const std::string kept = names.count("q0") ? "q0" : *names.begin();
    EXPECT_EQ(as_tenant(c, acme, "POST", "/api/v1/push", push_body(kept)).status, 201);
    EXPECT_EQ(as_tenant(c, acme, "POST", "/api/v1/configure", json{{"queue", kept}}.dump()).status, 200);
    EXPECT_EQ(queues_of(acme), 3);
    EXPECT_EQ(messages_of(acme), 4);

    // Another tenant has its own count.
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(as_tenant(c, globex, "POST", "/api/v1/push", push_body("q" + std::to_string(i))).status, 201);
    EXPECT_EQ(as_tenant(c, globex, "POST", "/api/v1/push", push_body("q3")).status, 429);
    EXPECT_EQ(queues_of(globex), 3);

    // Deleting a queue frees its place.
    EXPECT_EQ(as_tenant(c, acme, "DELETE", "/api/v1/resources/queues/" + kept).status, 200);
    EXPECT_EQ(as_tenant(c, acme, "POST", "/api/v1/push", push_body("late")).status, 201);
    EXPECT_EQ(queues_of(acme), 3);
}

TEST(TenantLimits, SpooledPushesWereAnsweredSoTheDrainCreatesTheirQueuesPastTheLimit) {
    broker_process b(database_url(), with_tenancy({{"QUEEN_TENANT_MAX_QUEUES", "1"}}));
    const auto acme = unique_name("lim-s-acme");
    auto c = client_of(b);
    ASSERT_EQ(as_tenant(c, acme, "POST", "/api/v1/push", push_body("first")).status, 201);
    ASSERT_EQ(as_tenant(c, acme, "POST", "/api/v1/push", push_body("second")).status, 429);

    ASSERT_EQ(c.post("/api/v1/system/maintenance", json{{"enabled", true}}).status, 200);
    auto spooled = as_tenant(c, acme, "POST", "/api/v1/push", push_body("second"));
    ASSERT_EQ(spooled.status, 201) << spooled.body;
    EXPECT_EQ(spooled.json()[0]["status"], "buffered") << spooled.body;
    EXPECT_EQ(queues_of(acme), 1);
    ASSERT_EQ(c.post("/api/v1/system/maintenance", json{{"enabled", false}}).status, 200);
    ASSERT_TRUE(eventually([&] { return messages_of(acme) == 2; }));
    EXPECT_EQ(queues_of(acme), 2);
    // At the first attempt: no drain paused on the limit and retried.
    EXPECT_EQ(b.log().find("drain paused"), std::string::npos) << b.log();
    // Past the limit now, a push that would create a third queue is still refused.
    EXPECT_EQ(as_tenant(c, acme, "POST", "/api/v1/push", push_body("third")).status, 429);
    EXPECT_EQ(queues_of(acme), 2);
}

TEST(TenantLimits, StoredBytesPastTheLimitRefusePushesOfThatTenantOnly) {
    broker_process b(database_url(),
                     with_tenancy({{"QUEEN_TENANT_MAX_BYTES", "4096"}, {"QUEEN_STATS_INTERVAL_MS", "200"}}));
    const auto acme = unique_name("lim-b-acme"), globex = unique_name("lim-b-globex");
    auto c = client_of(b);
    const std::string big(3000, 'x');

    // Pushes pass until the snapshot counts acme's bytes at the limit (whichever broker refreshes
    // it: this one asked for bytes); then each is refused.
    int stored = 0;
    http_reply refused;
    ASSERT_TRUE(eventually([&] {
        auto r = as_tenant(c, acme, "POST", "/api/v1/push", push_body("orders", json{{"payload", {{"pad", big}}}}));
        if (r.status == 201) {
            ++stored;
            return false;
        }
        refused = r;
        return true;
    }, 60s));
    EXPECT_EQ(refused.status, 429) << refused.body;
    EXPECT_NE(error_of(refused).find("QUEEN_TENANT_MAX_BYTES is 4096"), std::string::npos) << refused.body;
    EXPECT_GE(stored, 1);
    EXPECT_EQ(messages_of(acme), stored);

    // A transaction with a push is refused as well, and stores nothing.
    json tx{{"operations", json::array({json{{"type", "push"}, {"items", json::array({{{"queue", "orders"}, {"payload", 1}}})}}})}};
    auto refused_tx = as_tenant(c, acme, "POST", "/api/v1/transaction", tx.dump());
    EXPECT_EQ(refused_tx.status, 429) << refused_tx.body;
    EXPECT_EQ(messages_of(acme), stored);

    // Reading and consuming go on; another tenant still pushes.
    auto popped = as_tenant(c, acme, "GET", "/api/v1/pop/queue/orders?autoAck=true");
    EXPECT_EQ(popped.status, 200) << popped.body;
    EXPECT_EQ(as_tenant(c, globex, "POST", "/api/v1/push", push_body("orders")).status, 201);
    EXPECT_EQ(messages_of(globex), 1);
}

TEST(TenantLimits, EachTenantHasItsOwnRequestRate) {
    broker_process b(database_url(), with_tenancy({{"QUEEN_TENANT_RATE_LIMIT_PER_SECOND", "1"},
                                                         {"QUEEN_TENANT_RATE_LIMIT_BURST", "3"}}));
    const auto acme = unique_name("lim-r-acme"), globex = unique_name("lim-r-globex");
    auto c = client_of(b);

    const auto started = std::chrono::steady_clock::now();
    int admitted = 0;
    http_reply refused;
    for (int i = 0; i < 10; ++i) {
        auto r = as_tenant(c, acme, "POST", "/api/v1/push", push_body("orders"));
        if (r.status == 201)
            ++admitted;
        else
            refused = r;
    }
    const auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_GE(admitted, 3);
    EXPECT_LE(admitted, 3 + static_cast<int>(elapsed) + 1);
    ASSERT_EQ(refused.status, 429) << refused.body;
    ASSERT_TRUE(refused.has_header("retry-after"));
    EXPECT_NE(error_of(refused).find("tenant request rate limit exceeded"), std::string::npos) << refused.body;
    EXPECT_EQ(messages_of(acme), admitted);

    // globex's bucket is its own; public routes are not counted.
    EXPECT_EQ(as_tenant(c, globex, "POST", "/api/v1/push", push_body("orders")).status, 201);
    EXPECT_EQ(c.get("/health").status, 200);
    EXPECT_EQ(messages_of(globex), 1);
}

TEST(TenantLimits, ATenantParksAtMostMaxLongPolls) {
    broker_process b(database_url(), with_tenancy({{"QUEEN_TENANT_MAX_LONGPOLLS", "1"}}));
    const auto acme = unique_name("lim-p-acme"), globex = unique_name("lim-p-globex");
    auto setup = client_of(b);
    ASSERT_EQ(as_tenant(setup, acme, "POST", "/api/v1/configure", json{{"queue", "orders"}}.dump()).status, 200);
    ASSERT_EQ(as_tenant(setup, globex, "POST", "/api/v1/configure", json{{"queue", "orders"}}.dump()).status, 200);

    auto parked = std::async(std::launch::async, [&] {
        auto c = client_of(b);
        return as_tenant(c, acme, "GET", "/api/v1/pop/queue/orders?wait=true&timeout=30000&autoAck=true");
    });
    auto other = client_of(b);
    ASSERT_TRUE(eventually([&] {
        return other.get("/metrics/prometheus").body.find("queen_http_requests_in_flight 2") != std::string::npos;
    }));
    auto refused = as_tenant(other, acme, "GET", "/api/v1/pop/queue/orders?wait=true&timeout=100");
    EXPECT_EQ(refused.status, 429) << refused.body;
    EXPECT_NE(error_of(refused).find("too many parked long-polls for this tenant (the limit is 1)"), std::string::npos)
        << refused.body;
    // Another tenant parks; a pop that does not wait is not limited.
    EXPECT_EQ(as_tenant(other, globex, "GET", "/api/v1/pop/queue/orders?wait=true&timeout=200").status, 204);
    EXPECT_EQ(as_tenant(other, acme, "GET", "/api/v1/pop/queue/orders?wait=false").status, 204);

    ASSERT_EQ(as_tenant(setup, acme, "POST", "/api/v1/push", push_body("orders", json{{"payload", {{"n", 7}}}})).status,
              201);
    auto delivered = parked.get();
    ASSERT_EQ(delivered.status, 200) << delivered.body;
    EXPECT_EQ(delivered.json()["messages"][0]["data"], json({{"n", 7}}));
    // Its slot came back.
    ASSERT_EQ(as_tenant(setup, acme, "POST", "/api/v1/push", push_body("orders", json{{"payload", {{"n", 8}}}})).status,
              201);
    auto next = as_tenant(other, acme, "GET", "/api/v1/pop/queue/orders?wait=true&timeout=5000");
    ASSERT_EQ(next.status, 200) << next.body;
    EXPECT_EQ(next.json()["messages"][0]["data"], json({{"n", 8}}));
}

}  // namespace
}  // namespace queen::test
