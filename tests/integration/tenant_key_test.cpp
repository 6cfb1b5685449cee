// A tenant's queue is stored under one key, made twice by design: by the broker
// (domain::tenant_scope::key) and by the database (queen.tenant_queue_key, for the SQL-level
// API and the proxy). Both make the same key from the same names (sql/operations.json,
// "repeated_by_design").
#include "domain/tenant_scope.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace queen::test {
namespace {

// `s` as an SQL string literal.
std::string literal(const std::string& s) {
    std::string out = "'";
    for (char ch : s) out += ch == '\'' ? std::string("''") : std::string(1, ch);
    return out + "'";
}

TEST(TenantKey, TheBrokerAndTheDatabaseMakeTheSameKey) {
    broker();  // the default broker has applied the schema
    const std::vector<std::pair<std::string, std::string>> cases{
        {"acme", "orders"}, {"acme", "o'rders.v2"}, {"globex-eu", "zürich/lane:1"}, {"t", "a b"}, {"x_1", "q"}};
    for (const auto& [tenant, name] : cases) {
        const domain::tenant_scope scope(tenant, false);
        const auto broker_key = scope.key(name);
        ASSERT_TRUE(broker_key.has_value()) << tenant << " " << name;
        const auto database_key = cluster().run_sql("SELECT queen.tenant_queue_key(" + literal(name) + ", " +
                                                     literal(tenant) + ")");
        EXPECT_EQ(*broker_key, database_key) << tenant << " " << name;
    }
    // The default tenant's queues, and tenancy off: the bare name on both sides.
    const domain::tenant_scope default_scope("acme", true);
    EXPECT_EQ(default_scope.key("orders").value(), cluster().run_sql("SELECT queen.tenant_queue_key('orders', '')"));
    EXPECT_EQ(domain::tenant_scope().key("orders").value(), cluster().run_sql("SELECT queen.tenant_queue_key('orders')"));
}

}  // namespace
}  // namespace queen::test
