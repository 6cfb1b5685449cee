// A Queen deployment's environment (README, "Settings"): each of Queen's names with its unit,
// the QUEEN_* name winning where both are set, the start-up line naming the variable that
// set each value, and bad values refused with the variable's name.
#include "config/config.hpp"
#include "config_support.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

using queen::config::describe;
using queen::config::from_map;

using queen::test::error_of;
using queen::test::mentions;

TEST(QueenNames, EachIsReadWithQueensUnit) {
    auto c = from_map({{"HOME", "/h"},
                       {"FILE_BUFFER_DIR", "/var/lib/queen/buffers"},
                       {"RETENTION_INTERVAL", "300000"},
                       {"EVICTION_INTERVAL", "45000"},
                       {"PARTITION_CLEANUP_DAYS", "2"},
                       {"DEFAULT_SUBSCRIPTION_MODE", "new"},
                       {"DB_POOL_SIZE", "12"},
                       {"PG_USE_SSL", "true"},
                       {"DB_STATEMENT_TIMEOUT", "1500"},
                       {"METRICS_RETENTION_DAYS", "90"}});
    EXPECT_EQ(c.spool_dir, "/var/lib/queen/buffers");
    EXPECT_EQ(c.housekeeping_interval.count(), 45000) << "the smaller of the two intervals";
    EXPECT_EQ(c.partition_idle.count(), 2 * 86400);
    EXPECT_FALSE(c.new_groups_from_beginning);
    EXPECT_EQ(c.pool_size, 12u);
    EXPECT_EQ(c.db_sslmode, "require");
    EXPECT_EQ(c.db_statement_timeout.count(), 1500);
    EXPECT_EQ(c.metrics_retention_days, 90);

    const auto line = describe(c);
    EXPECT_TRUE(mentions(line, "pool_size=12 (DB_POOL_SIZE)")) << line;
    EXPECT_TRUE(mentions(line, "spool_dir=/var/lib/queen/buffers (FILE_BUFFER_DIR)")) << line;
    EXPECT_TRUE(mentions(line, "housekeeping_interval_ms=45000 (EVICTION_INTERVAL)")) << line;
    EXPECT_TRUE(mentions(line, "partition_idle_s=172800 (PARTITION_CLEANUP_DAYS)")) << line;
    EXPECT_TRUE(mentions(line, "default_subscription_mode=new (DEFAULT_SUBSCRIPTION_MODE)")) << line;
    EXPECT_TRUE(mentions(line, "db_sslmode=require (PG_USE_SSL)")) << line;
    EXPECT_TRUE(mentions(line, "db_statement_timeout_ms=1500 (DB_STATEMENT_TIMEOUT)")) << line;
    EXPECT_TRUE(mentions(line, "metrics_retention_days=90 (METRICS_RETENTION_DAYS)")) << line;
}

TEST(QueenNames, QueenPrefixedNamesWin) {
    auto c = from_map({{"HOME", "/h"},
                       {"FILE_BUFFER_DIR", "/queen"},
                       {"QUEEN_SPOOL_DIR", "/ours"},
                       {"DB_POOL_SIZE", "12"},
                       {"QUEEN_DB_POOL_SIZE", "7"},
                       {"RETENTION_INTERVAL", "1000"},
                       {"QUEEN_HOUSEKEEPING_INTERVAL_MS", "9000"},
                       {"PARTITION_CLEANUP_DAYS", "2"},
                       {"QUEEN_PARTITION_IDLE_SECONDS", "60"},
                       {"DEFAULT_SUBSCRIPTION_MODE", "new"},
                       {"QUEEN_DEFAULT_SUBSCRIPTION_MODE", "all"},
                       {"PG_USE_SSL", "true"},
                       {"QUEEN_DB_SSLMODE", "verify-full"},
                       {"DB_STATEMENT_TIMEOUT", "1500"},
                       {"QUEEN_DB_STATEMENT_TIMEOUT_MS", "0"},
                       {"PG_HOST", "queen-db"},
                       {"QUEEN_DATABASE_URL", "postgresql://ours/q"}});
    EXPECT_EQ(c.spool_dir, "/ours");
    EXPECT_EQ(c.pool_size, 7u);
    EXPECT_EQ(c.housekeeping_interval.count(), 9000);
    EXPECT_EQ(c.partition_idle.count(), 60);
    EXPECT_TRUE(c.new_groups_from_beginning);
    EXPECT_EQ(c.db_sslmode, "verify-full");
    EXPECT_EQ(c.db_statement_timeout.count(), 0);
    EXPECT_EQ(c.conninfo, "postgresql://ours/q");
    const auto line = describe(c);
    EXPECT_TRUE(mentions(line, "pool_size=7 (QUEEN_DB_POOL_SIZE)")) << line;
    EXPECT_TRUE(mentions(line, "spool_dir=/ours (QUEEN_SPOOL_DIR)")) << line;
    EXPECT_TRUE(mentions(line, "database=postgresql://ours/q (QUEEN_DATABASE_URL)")) << line;
}

TEST(QueenNames, OneIntervalAloneMeetsTheOthersQueenDefault) {
    // Queen runs eviction every 60 s unless told otherwise: a longer retention interval alone
    // leaves the sweep at 60 s.
    auto r = from_map({{"HOME", "/h"}, {"RETENTION_INTERVAL", "600000"}});
    EXPECT_EQ(r.housekeeping_interval.count(), 60000);
    EXPECT_TRUE(mentions(describe(r), "housekeeping_interval_ms=60000 (EVICTION_INTERVAL's Queen default"))
        << describe(r);
    auto e = from_map({{"HOME", "/h"}, {"EVICTION_INTERVAL", "5000"}});
    EXPECT_EQ(e.housekeeping_interval.count(), 5000);
    auto none = from_map({{"HOME", "/h"}});
    EXPECT_EQ(none.housekeeping_interval.count(), 60000);
    EXPECT_FALSE(mentions(describe(none), "housekeeping_interval_ms=60000 (")) << "a default names no variable";
}

TEST(QueenNames, PgVariablesGetQueensDefaultsAndThePasswordIsRedacted) {
    auto c = from_map({{"HOME", "/h"}, {"PG_HOST", "db.example"}, {"PG_PASSWORD", "s3cret"}});
    EXPECT_FALSE(c.embedded);
    EXPECT_TRUE(mentions(c.conninfo, "host='db.example'")) << c.conninfo;
    EXPECT_TRUE(mentions(c.conninfo, "port='5432'")) << c.conninfo;
    EXPECT_TRUE(mentions(c.conninfo, "user='postgres'")) << c.conninfo;
    EXPECT_TRUE(mentions(c.conninfo, "dbname='postgres'")) << c.conninfo;
    const auto line = describe(c);
    EXPECT_FALSE(mentions(line, "s3cret")) << line;
    EXPECT_TRUE(mentions(line, "(PG_HOST, PG_PASSWORD)")) << line;
    auto ok = from_map({{"HOME", "/h"}, {"PG_USE_SSL", "false"}});
    EXPECT_EQ(ok.db_sslmode, "") << "PG_USE_SSL=false asks for nothing (libpq's default)";
    EXPECT_TRUE(ok.embedded);
}

TEST(QueenNames, BadValuesAreRefusedNamingTheVariable) {
    EXPECT_TRUE(mentions(error_of({{"HOME", "/h"}, {"DB_POOL_SIZE", "lots"}}), "DB_POOL_SIZE")) ;
    EXPECT_TRUE(mentions(error_of({{"HOME", "/h"}, {"DB_POOL_SIZE", "0"}}), "DB_POOL_SIZE"));
    EXPECT_TRUE(mentions(error_of({{"HOME", "/h"}, {"QUEEN_DB_POOL_SIZE", "-1"}}), "QUEEN_DB_POOL_SIZE"));
    EXPECT_TRUE(mentions(error_of({{"HOME", "/h"}, {"RETENTION_INTERVAL", "5m"}}), "RETENTION_INTERVAL"));
    EXPECT_TRUE(mentions(error_of({{"HOME", "/h"}, {"EVICTION_INTERVAL", "1"}}), "EVICTION_INTERVAL"));
    EXPECT_TRUE(mentions(error_of({{"HOME", "/h"}, {"PARTITION_CLEANUP_DAYS", "0"}}), "PARTITION_CLEANUP_DAYS"));
    EXPECT_TRUE(mentions(error_of({{"HOME", "/h"}, {"DEFAULT_SUBSCRIPTION_MODE", "latest"}}),
                         "DEFAULT_SUBSCRIPTION_MODE"));
    EXPECT_TRUE(mentions(error_of({{"HOME", "/h"}, {"PG_USE_SSL", "sometimes"}}), "PG_USE_SSL"));
    EXPECT_TRUE(mentions(error_of({{"HOME", "/h"}, {"DB_STATEMENT_TIMEOUT", "30s"}}), "DB_STATEMENT_TIMEOUT"));
    EXPECT_TRUE(mentions(error_of({{"HOME", "/h"}, {"QUEEN_DB_SSLMODE", "on"}}), "QUEEN_DB_SSLMODE"));
    EXPECT_TRUE(mentions(error_of({{"HOME", "/h"}, {"QUEEN_DB_KEEPALIVES_IDLE_S", "0"}}), "QUEEN_DB_KEEPALIVES_IDLE_S"));
    EXPECT_TRUE(mentions(error_of({{"HOME", "/h"}, {"PG_PORT", "99999"}}), "PG_PORT"));
    auto url = error_of({{"HOME", "/h"}, {"QUEEN_DATABASE_URL", "host=db nonsense=1 password=pw"}});
    EXPECT_TRUE(mentions(url, "QUEEN_DATABASE_URL")) << url;
    EXPECT_FALSE(mentions(url, "password=pw")) << url;
}

TEST(QueenNames, QueenSettingsWithoutACounterpartAreWarnedAbout) {
    auto c = from_map({{"HOME", "/h"}, {"PG_SSL_REJECT_UNAUTHORIZED", "true"}, {"NUM_WORKERS", "4"},
                       {"FILE_BUFFER_DIR", "/b"}});
    ASSERT_EQ(c.warnings.size(), 3u);
    EXPECT_TRUE(mentions(c.warnings[0], "PG_SSL_REJECT_UNAUTHORIZED")) << c.warnings[0];
    EXPECT_TRUE(mentions(c.warnings[0], "QUEEN_DB_SSLMODE=verify-full")) << c.warnings[0];
    EXPECT_TRUE(mentions(c.warnings[1], "QUEEN_THREADS")) << c.warnings[1];
    EXPECT_TRUE(mentions(c.warnings[2], "not read")) << c.warnings[2];
    EXPECT_TRUE(from_map({{"HOME", "/h"}}).warnings.empty());
}

TEST(QueenNames, ConnectionHardeningHasDefaultsAndOverrides) {
    auto d = from_map({{"HOME", "/h"}});
    EXPECT_EQ(d.db_keepalives_idle.count(), 5);
    EXPECT_EQ(d.db_keepalives_interval.count(), 2);
    EXPECT_EQ(d.db_keepalives_count, 3);
    EXPECT_EQ(d.db_tcp_user_timeout.count(), 5000);
    EXPECT_EQ(d.db_statement_timeout.count(), 30000) << "Queen's default";
    EXPECT_EQ(d.db_startup_wait.count(), 30000);
    auto c = from_map({{"HOME", "/h"},
                       {"QUEEN_DB_KEEPALIVES_IDLE_S", "30"},
                       {"QUEEN_DB_KEEPALIVES_INTERVAL_S", "10"},
                       {"QUEEN_DB_KEEPALIVES_COUNT", "6"},
                       {"QUEEN_DB_TCP_USER_TIMEOUT_MS", "0"},
                       {"QUEEN_DB_STARTUP_WAIT_MS", "1000"}});
    EXPECT_EQ(c.db_keepalives_idle.count(), 30);
    EXPECT_EQ(c.db_keepalives_interval.count(), 10);
    EXPECT_EQ(c.db_keepalives_count, 6);
    EXPECT_EQ(c.db_tcp_user_timeout.count(), 0);
    EXPECT_EQ(c.db_startup_wait.count(), 1000);
    EXPECT_TRUE(mentions(describe(c), "db_keepalives_idle_s=30 (QUEEN_DB_KEEPALIVES_IDLE_S)")) << describe(c);
}

}  // namespace
