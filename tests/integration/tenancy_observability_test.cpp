// Tenancy on the observability routes: status and analytics count only the caller's queues;
// Prometheus' per-queue series carry the tenant.
//
// Tenancy (docs/tenancy.md): two tenants with the same queue, partition and transaction names
// use one broker and one database, and neither reaches the other's messages, cursors or leases.
// The other files of these suites: tenancy_delivery, _admin, _observability and _claims_test.cpp.
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

}  // namespace
}  // namespace queen::test
