// The embedded schema: migration numbers are unique and contiguous, procedures are ordered.
#include "schema/migrator.hpp"
#include "schema/sql_bundle.hpp"

#include <gtest/gtest.h>

#include <regex>
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

TEST(SchemaBundle, EveryTriggerTableIsLockedFirst) {
    // The apply must hold no trigger table while it waits for another (05_trigger_table_locks.sql).
    const auto& procedures = embedded_procedures();
    ASSERT_FALSE(procedures.empty());
    ASSERT_EQ(procedures.front().name, "05_trigger_table_locks.sql");
    const std::string locks(procedures.front().text);
    std::smatch lock_statement;
    ASSERT_TRUE(std::regex_search(locks, lock_statement, std::regex(R"(LOCK TABLE ([^;]*) IN SHARE ROW EXCLUSIVE MODE)")));
    const std::string locked = lock_statement[1];
    std::set<std::string> locked_tables;
    const std::regex table(R"(queen\.[a-z_]+)");
    for (std::sregex_iterator it(locked.begin(), locked.end(), table), end; it != end; ++it) locked_tables.insert(it->str());

    const std::regex trigger(R"(CREATE OR REPLACE TRIGGER\s+\w+\s+[^;]*?\sON\s+(queen\.[a-z_]+))");
    int triggers = 0;
    for (const auto& p : procedures) {
        const std::string text(p.text);
        for (std::sregex_iterator it(text.begin(), text.end(), trigger), end; it != end; ++it) {
            ++triggers;
            EXPECT_TRUE(locked_tables.count((*it)[1].str())) << p.name << " puts a trigger on " << (*it)[1]
                                                               << ", which 05_trigger_table_locks.sql does not lock";
        }
    }
    EXPECT_GT(triggers, 0);
}

TEST(SchemaBundle, TheFingerprintIsAHexSha256) {
    const auto fingerprint = embedded_procedures_fingerprint();
    EXPECT_EQ(fingerprint.size(), 64u);
    EXPECT_EQ(fingerprint.find_first_not_of("0123456789abcdef"), std::string_view::npos) << fingerprint;
}

}  // namespace
}  // namespace queen::schema
