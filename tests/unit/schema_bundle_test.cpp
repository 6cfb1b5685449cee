// The embedded schema: migration numbers are unique and contiguous, procedures are ordered.
#include "schema/migrator.hpp"
#include "schema/sql_bundle.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace queen::schema {
namespace {


TEST(SchemaBundle, MigrationNumbersAreUniqueAndContiguousFromOne) {
    std::set<int> seen;
    int expected = 1;
    for (const auto& m : embedded_migrations()) {
        int v = migration_number(m.name);
        EXPECT_TRUE(seen.insert(v).second) << "two migrations numbered " << v << " (" << m.name << ")";
        EXPECT_EQ(v, expected++) << m.name;
        EXPECT_FALSE(m.text.empty()) << m.name;
    }
    EXPECT_EQ(embedded_schema_version(), static_cast<int>(embedded_migrations().size()));
}

TEST(SchemaBundle, ProceduresAreNumberedSoTheirOrderIsExplicit) {
    ASSERT_FALSE(embedded_procedures().empty());
    for (const auto& p : embedded_procedures()) EXPECT_GT(migration_number(p.name), 0) << p.name;
}

}  // namespace
}  // namespace queen::schema
