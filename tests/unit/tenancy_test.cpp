// Tenancy's pure parts (docs/tenancy.md): tenant names, the stored key of a tenant's queue
// and its way back, the scope argument of the queen.* functions, the settings, and a tenancy
// rule on every route of the table.
#include "api/route_table.hpp"
#include "config/config.hpp"
#include "config_support.hpp"
#include "domain/tenant_scope.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using queen::domain::tenant_name_problem;
using queen::domain::tenant_scope;
using queen::test::error_of;
using queen::test::mentions;

TEST(TenantNames, ValidNamesHaveNoProblem) {
    EXPECT_EQ(tenant_name_problem("acme"), "");
    EXPECT_EQ(tenant_name_problem("team:payments@eu-1"), "");
    EXPECT_EQ(tenant_name_problem(std::string(128, 't')), "");
    EXPECT_EQ(tenant_name_problem("équipe"), "");
}

TEST(TenantNames, EmptyLongAndControlCharactersAreRefused) {
    EXPECT_EQ(tenant_name_problem(""), "is empty");
    EXPECT_EQ(tenant_name_problem(std::string(129, 't')), "is longer than 128 bytes");
    EXPECT_EQ(tenant_name_problem("a\x1f" "b"), "holds a control character");
    EXPECT_EQ(tenant_name_problem("a\tb"), "holds a control character");
    EXPECT_EQ(tenant_name_problem("a\x7f"), "holds a control character");
}

TEST(TenantScope, TenancyOffKeepsNamesAndFiltersNothing) {
    const tenant_scope off;
    EXPECT_FALSE(off.tenancy_on());
    EXPECT_EQ(off.key("orders"), "orders");
    EXPECT_EQ(off.key("a\x1f" "b"), "a\x1f" "b");
    EXPECT_EQ(off.local("acme\x1f" "orders"), "acme\x1f" "orders");
    EXPECT_EQ(off.sql_scope(), std::nullopt);
}

TEST(TenantScope, ANamedTenantsQueuesAreKeyedByTheTenant) {
    const tenant_scope acme("acme", false);
    EXPECT_EQ(acme.key("orders"), "acme\x1f" "orders");
    EXPECT_EQ(acme.local("acme\x1f" "orders"), "orders");
    EXPECT_EQ(acme.key("globex\x1f" "orders"), std::nullopt);
    EXPECT_EQ(acme.sql_scope(), "acme");
}

TEST(TenantScope, TheDefaultTenantsQueuesHaveNoTenant) {
    const tenant_scope d("default", true);
    EXPECT_EQ(d.key("orders"), "orders");
    EXPECT_EQ(d.local("orders"), "orders");
    EXPECT_EQ(d.key("acme\x1f" "orders"), std::nullopt);
    EXPECT_EQ(d.sql_scope(), "");
}

TEST(TenancyConfig, OffByDefaultAndReadWhenSet) {
    auto off = queen::config::from_map({{"HOME", "/h"}});
    EXPECT_TRUE(off.tenancy_header.empty());
    EXPECT_EQ(off.tenancy_default, "default");
    EXPECT_TRUE(mentions(describe(off), "tenancy_header=none (tenancy off)"));
    auto on = queen::config::from_map({{"HOME", "/h"},
                                       {"QUEEN_TENANCY_HEADER", "X-Tenant"},
                                       {"QUEEN_TENANCY_CLAIM", "org"},
                                       {"QUEEN_TENANCY_DEFAULT", "legacy"},
                                       {"JWT_ENABLED", "true"},
                                       {"JWT_SECRET", "s"}});
    EXPECT_EQ(on.tenancy_header, "X-Tenant");
    EXPECT_EQ(on.auth.tenant_claim, "org");
    EXPECT_EQ(on.tenancy_default, "legacy");
    EXPECT_TRUE(mentions(describe(on), "tenancy_header=X-Tenant (QUEEN_TENANCY_HEADER)"));
}

TEST(TenancyConfig, InconsistentSettingsAreRefused) {
    EXPECT_EQ(error_of({{"HOME", "/h"}, {"QUEEN_TENANCY_HEADER", "X Tenant"}}),
              "QUEEN_TENANCY_HEADER must be an HTTP header name, got 'X Tenant'");
    EXPECT_EQ(error_of({{"HOME", "/h"}, {"QUEEN_TENANCY_CLAIM", "org"}}),
              "QUEEN_TENANCY_CLAIM needs QUEEN_TENANCY_HEADER: the header turns tenancy on");
    EXPECT_EQ(error_of({{"HOME", "/h"}, {"QUEEN_TENANCY_HEADER", "X-Tenant"}, {"QUEEN_TENANCY_CLAIM", "org"}}),
              "QUEEN_TENANCY_CLAIM needs JWT_ENABLED: the claim is read from the token");
    EXPECT_EQ(error_of({{"HOME", "/h"}, {"QUEEN_TENANCY_DEFAULT", std::string(200, 'd')}}),
              "QUEEN_TENANCY_DEFAULT is longer than 128 bytes");
}

TEST(TenancyConfig, TenantLimitsAreReadAndNeedTenancy) {
    auto on = queen::config::from_map({{"HOME", "/h"},
                                       {"QUEEN_TENANCY_HEADER", "X-Tenant"},
                                       {"QUEEN_TENANT_MAX_QUEUES", "10"},
                                       {"QUEEN_TENANT_MAX_BYTES", "1048576"},
                                       {"QUEEN_TENANT_MAX_LONGPOLLS", "4"},
                                       {"QUEEN_TENANT_RATE_LIMIT_PER_SECOND", "50"}});
    EXPECT_EQ(on.per_tenant.max_queues, 10u);
    EXPECT_EQ(on.per_tenant.max_bytes, 1048576u);
    EXPECT_EQ(on.per_tenant.max_longpolls, 4u);
    EXPECT_EQ(on.per_tenant.rate_per_second, 50);
    EXPECT_EQ(on.per_tenant.rate_burst, 50);  // one second's worth
    EXPECT_TRUE(mentions(describe(on), "tenant_max_queues=10 (QUEEN_TENANT_MAX_QUEUES)"));
    auto off = queen::config::from_map({{"HOME", "/h"}});
    EXPECT_FALSE(off.per_tenant.any());
    for (const char* name : {"QUEEN_TENANT_MAX_QUEUES", "QUEEN_TENANT_MAX_BYTES", "QUEEN_TENANT_MAX_LONGPOLLS",
                             "QUEEN_TENANT_RATE_LIMIT_PER_SECOND"})
        EXPECT_EQ(error_of({{"HOME", "/h"}, {name, "1"}}),
                  "the QUEEN_TENANT_* limits need QUEEN_TENANCY_HEADER: they count per tenant")
            << name;
}

// Public routes are outside tenancy; every other route names its rule, and the routes under
// /api/v1/system/ are the operator's.
TEST(TenancyRules, EveryRouteHasTheRuleOfItsAccess) {
    using queen::api::tenancy_rule;
    for (const auto& r : queen::api::route_table()) {
        const bool is_public = r.access == queen::api::access_level::anyone;
        EXPECT_EQ(is_public, r.tenancy == tenancy_rule::outside) << r.path;
        if (r.path.starts_with("/api/v1/system/")) {
            EXPECT_EQ(r.tenancy, tenancy_rule::operator_) << r.path;
        }
    }
}

}  // namespace
