// Hostile tenants (docs/tenancy.md): a tenant's admin token is admin inside its tenant and no
// operator of the others; a tenant header that is not UTF-8 is a 400 that changes nothing.
#include "auth_support.hpp"

#include <gtest/gtest.h>

namespace queen::test {
namespace {

using nlohmann::json;

const std::string header = "X-Tenant";

class TenancyHostile : public ::testing::Test {
protected:
    static std::map<std::string, std::string> claims_env() {
        return {{"QUEEN_TENANCY_HEADER", header},
                {"QUEEN_TENANCY_CLAIM", "tenant"},
                {"JWT_ENABLED", "true"},
                {"JWT_SECRET", auth_support::secret}};
    }
    static std::string token(const std::string& role, const std::optional<json>& tenant) {
        json claims = jwt::claims("sub-" + role, role);
        if (tenant) claims["tenant"] = *tenant;
        return jwt::token("HS256", claims, nullptr, auth_support::secret);
    }
    static http_reply call(http_client& c, const std::string& method, const std::string& target,
                           const std::string& token, const std::string& body = "",
                           const std::optional<std::string>& tenant = std::nullopt) {
        std::map<std::string, std::string> headers;
        if (!token.empty()) headers["Authorization"] = "Bearer " + token;
        if (tenant) headers[header] = *tenant;
        if (!body.empty()) headers["Content-Type"] = "application/json";
        return c.request(method, target, body, headers);
    }
    // Messages the database holds under a stored key (over shards: summed).
    static long long messages(const std::string& key) {
        return data_sum("SELECT count(*) FROM queen.messages WHERE queue = " + quote(key));
    }
    static long long queues(const std::string& key) {
        return data_sum("SELECT count(*) FROM queen.queues WHERE name = " + quote(key));
    }
    static std::string push_body(const std::string& queue, const std::string& marker) {
        return json{{"items", {{{"queue", queue}, {"payload", {{"marker", marker}}}}}}}.dump();
    }
};

TEST_F(TenancyHostile, ATenantsAdminTokenReachesNoOperatorRoute) {
    broker_process b(cluster().conninfo(), claims_env());
    auto c = client_of(b);
    const auto q = unique_name("hostile-admin");
    const auto acme_admin = token("admin", json("acme"));
    const auto globex = token("read-write", json("globex"));
    const auto operator_admin = token("admin", std::nullopt);
    ASSERT_EQ(call(c, "POST", "/api/v1/push", globex, push_body(q, "globex-secret")).status, 201);
    ASSERT_EQ(call(c, "POST", "/api/v1/push", acme_admin, push_body(q, "acme-own")).status, 201);

    const std::string refused =
        "this route serves every tenant: it needs an admin token without the tenant claim tenant";
    for (const char* target :
         {"/api/v1/system/tenants", "/metrics/prometheus", "/metrics", "/api/v1/analytics/postgres-stats",
          "/api/v1/status/buffers", "/api/v1/analytics/system-metrics", "/api/v1/analytics/worker-metrics",
          "/api/v1/system/maintenance", "/api/v1/system/maintenance/pop"}) {
        const auto r = call(c, "GET", target, acme_admin);
        EXPECT_EQ(r.status, 403) << target << " " << r.body.substr(0, 300);
        EXPECT_EQ(auth_support::error_of(r), refused) << target;
        EXPECT_EQ(r.body.find("globex"), std::string::npos) << target;
    }
    const auto refresh = call(c, "POST", "/api/v1/stats/refresh", acme_admin, "{}");
    EXPECT_EQ(refresh.status, 403);
    EXPECT_EQ(auth_support::error_of(refresh), refused);
    const auto pop_off = call(c, "POST", "/api/v1/system/maintenance/pop", acme_admin, json{{"enabled", true}}.dump());
    EXPECT_EQ(pop_off.status, 403);
    EXPECT_EQ(auth_support::error_of(pop_off), refused);

    // Nothing changed for the other tenant: pop maintenance is off, its message is delivered.
    const auto state = call(c, "GET", "/api/v1/system/maintenance", operator_admin);
    ASSERT_EQ(state.status, 200) << state.body;
    EXPECT_EQ(state.json()["popMaintenanceMode"], false);
    const auto popped = call(c, "GET", "/api/v1/pop/queue/" + q + "?wait=false&batch=5", globex);
    ASSERT_EQ(popped.status, 200) << popped.body;
    ASSERT_EQ(popped.json()["messages"].size(), 1u);
    EXPECT_EQ(popped.json()["messages"][0]["data"]["marker"], "globex-secret");

    // The operator's token still reaches the operator routes and sees both tenants.
    const auto tenants = call(c, "GET", "/api/v1/system/tenants", operator_admin);
    ASSERT_EQ(tenants.status, 200) << tenants.body;
    EXPECT_NE(tenants.body.find("\"acme\""), std::string::npos) << tenants.body;
    EXPECT_NE(tenants.body.find("\"globex\""), std::string::npos) << tenants.body;

    // Inside its tenant the token is admin: it deletes its own queue, and only its own.
    ASSERT_EQ(queues("acme\x1f" + q), 1);
    const auto deleted = call(c, "DELETE", "/api/v1/resources/queues/" + q, acme_admin);
    EXPECT_EQ(deleted.status, 200) << deleted.body;
    EXPECT_EQ(queues("acme\x1f" + q), 0);
    EXPECT_EQ(queues("globex\x1f" + q), 1);
    EXPECT_EQ(messages("globex\x1f" + q), 1);
}

TEST_F(TenancyHostile, ATenantClaimThatIsNotAStringNamesNoTenantAndNoOperator) {
    broker_process b(cluster().conninfo(), claims_env());
    auto c = client_of(b);
    const auto q = unique_name("hostile-claim");
    const auto odd = token("admin", json(7));
    const auto tenants = call(c, "GET", "/api/v1/system/tenants", odd);
    EXPECT_EQ(tenants.status, 403);
    EXPECT_EQ(auth_support::error_of(tenants),
              "this route serves every tenant: it needs an admin token without the tenant claim tenant");
    const auto push = call(c, "POST", "/api/v1/push", odd, push_body(q, "x"), std::string("acme"));
    EXPECT_EQ(push.status, 403);
    EXPECT_EQ(auth_support::error_of(push), "the token's tenant claim tenant is not a string");
    EXPECT_EQ(queues("acme\x1f" + q), 0);
}

TEST_F(TenancyHostile, ATenantHeaderThatIsNotUtf8IsRefusedAndChangesNothing) {
    const auto q = unique_name("hostile-utf8");
    const std::string expected = "tenant header X-Tenant is not valid UTF-8";
    {
        broker_process b(cluster().conninfo(), claims_env());
        auto c = client_of(b);
        const auto admin = token("admin", std::nullopt);
        for (const std::string& bad : {std::string("\xff"), std::string("acme\xc3"), std::string("\xed\xa0\x80")}) {
            const auto r = call(c, "POST", "/api/v1/push", admin, push_body(q, "x"), bad);
            EXPECT_EQ(r.status, 400) << r.body;
            EXPECT_EQ(auth_support::error_of(r), expected);
        }
        const auto pop = call(c, "GET", "/api/v1/pop/queue/" + q + "?wait=false", admin, "", std::string("\xff"));
        EXPECT_EQ(pop.status, 400) << pop.body;
        EXPECT_EQ(auth_support::error_of(pop), expected);
        EXPECT_EQ(b.log().find("ERROR"), std::string::npos) << b.log();
        EXPECT_EQ(data_sum("SELECT count(*) FROM queen.queues WHERE name LIKE " + quote("%" + q)), 0);
    }
    // Without auth the header alone names the tenant: the same answer.
    broker_process b(cluster().conninfo(), {{"QUEEN_TENANCY_HEADER", header}});
    auto c = client_of(b);
    const auto r = call(c, "POST", "/api/v1/push", "", push_body(q, "x"), std::string("\xff"));
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(auth_support::error_of(r), expected);
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.queues WHERE name LIKE " + quote("%" + q)), 0);
    EXPECT_EQ(b.log().find("ERROR"), std::string::npos) << b.log();
}

}  // namespace
}  // namespace queen::test
