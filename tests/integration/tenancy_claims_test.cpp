// TenancyClaims: with JWT auth, the token's claim names the tenant and a contradicting header is
// refused; the routes over every tenant need the admin role.
//
// Tenancy (docs/tenancy.md): two tenants with the same queue, partition and transaction names
// use one broker and one database, and neither reaches the other's messages, cursors or leases.
// The other files of these suites: tenancy_delivery, _admin, _observability and _claims_test.cpp.
#include "auth_support.hpp"
#include "tenancy_support.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

namespace queen::test {
namespace {

using namespace tenancy_support;
using nlohmann::json;
using namespace std::chrono_literals;

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
