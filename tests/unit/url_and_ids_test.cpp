// URL decoding, message ids, time stamps, array literals, configuration: pure helpers.
#include "config/config.hpp"
#include "schema/codec_path.hpp"
#include "domain/message_id.hpp"
#include "db/pg_array.hpp"
#include "http/url.hpp"

#include <gtest/gtest.h>

namespace queen {
namespace {

TEST(Url, PercentDecoding) {
    EXPECT_EQ(*http::percent_decode("a%20b%2Fc", false), "a b/c");
    EXPECT_EQ(*http::percent_decode("a+b", false), "a+b");
    EXPECT_EQ(*http::percent_decode("a+b", true), "a b");
    EXPECT_FALSE(http::percent_decode("%zz", false));
    EXPECT_FALSE(http::percent_decode("%2", false));
}

TEST(Url, TargetSplitting) {
    auto t = http::parse_target("/api/v1/pop/queue/a%20b?batch=10&wait=true&x&consumerGroup=g%2B1");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->segments, (std::vector<std::string>{"api", "v1", "pop", "queue", "a%20b"}));
    EXPECT_EQ(t->query.at("batch"), "10");
    EXPECT_EQ(t->query.at("x"), "");
    EXPECT_EQ(t->query.at("consumerGroup"), "g+1");
    EXPECT_FALSE(http::parse_target("/x?a=%G0"));
}

TEST(MessageId, RoundTripAndLayout) {
    EXPECT_EQ(domain::message_id(4, 1), "00000000-0000-0004-0000-000000000001");
    EXPECT_EQ(domain::message_id(0x0102030405060708, 0x1112131415161718), "01020304-0506-0708-1112-131415161718");
    auto back = domain::parse_message_id(domain::message_id(123456789, 987654321));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->first, 123456789);
    EXPECT_EQ(back->second, 987654321);
    EXPECT_FALSE(domain::parse_message_id("not-an-id"));
}

TEST(Time, IsoFormattingAndParsing) {
    EXPECT_EQ(domain::iso_time(1777201168267966), "2026-04-26T10:59:28.267966Z");
    EXPECT_EQ(domain::iso_time(0), "1970-01-01T00:00:00.000000Z");
    EXPECT_EQ(*domain::parse_iso_time("2026-04-26T10:59:28.267966Z"), 1777201168267966);
    EXPECT_EQ(*domain::parse_iso_time("2026-04-26T12:59:28.267966+02:00"), 1777201168267966);
    EXPECT_EQ(*domain::parse_iso_time("2026-04-26"), 1777161600000000);
    EXPECT_FALSE(domain::parse_iso_time("2026-13-01T00:00:00Z"));
    EXPECT_FALSE(domain::parse_iso_time("2026-02-30T00:00:00Z"));
    EXPECT_FALSE(domain::parse_iso_time("2026-04-31"));
    EXPECT_TRUE(domain::parse_iso_time("2024-02-29T23:59:59Z"));
    EXPECT_FALSE(domain::parse_iso_time("yesterday"));
    EXPECT_FALSE(domain::parse_iso_time("2026-04-26T10:59:28Zjunk"));
}

TEST(PgArray, QuotesAndNulls) {
    db::pg_array_builder b;
    b.add(std::string_view("plain"));
    b.add(std::string_view("with \"quote\" and \\ backslash"));
    b.add_null();
    b.add(std::int64_t{42});
    EXPECT_EQ(b.finish(), R"({"plain","with \"quote\" and \\ backslash",NULL,42})");
    EXPECT_EQ(b.finish(), "{}");
}

TEST(Config, EnvironmentAndRedaction) {
    auto c = config::from_map({{"PORT", "7000"}, {"PG_HOST", "db"}, {"PG_PASSWORD", "s3cret"}, {"DB_POOL_SIZE", "3"}});
    EXPECT_EQ(c.port, 7000);
    EXPECT_FALSE(c.embedded);
    EXPECT_EQ(c.pool_size, 3u);
    EXPECT_EQ(config::describe(c).find("s3cret"), std::string::npos);
    EXPECT_NE(config::describe(c).find("password=***"), std::string::npos) << config::describe(c);
    EXPECT_TRUE(config::from_map({}).embedded);
    EXPECT_EQ(config::redact_conninfo("postgresql://u:pw@h/db"), "postgresql://u:***@h/db");
    EXPECT_THROW(config::from_map({{"PORT", "x"}}), std::invalid_argument);
    EXPECT_THROW(config::from_map({{"QUEEN_APPLY_SCHEMA", "maybe"}}), std::invalid_argument);
    EXPECT_FALSE(config::from_map({{"QUEEN_APPLY_SCHEMA", "0"}}).apply_schema);
}

TEST(Config, ExtensionPolicy) {
    using config::extension_policy;
    EXPECT_EQ(config::from_map({}).extension, extension_policy::auto_detect);
    EXPECT_EQ(config::from_map({{"QUEEN_EXTENSION", "auto"}}).extension, extension_policy::auto_detect);
    EXPECT_EQ(config::from_map({{"QUEEN_EXTENSION", "require"}}).extension, extension_policy::require);
    EXPECT_EQ(config::from_map({{"QUEEN_EXTENSION", "on"}}).extension, extension_policy::require);
    EXPECT_EQ(config::from_map({{"QUEEN_EXTENSION", "off"}}).extension, extension_policy::off);
    EXPECT_THROW(config::from_map({{"QUEEN_EXTENSION", "yes"}}), std::invalid_argument);
    EXPECT_NE(config::describe(config::from_map({{"QUEEN_EXTENSION", "on"}})).find("extension=require (QUEEN_EXTENSION)"),
              std::string::npos);
}

TEST(CodecPath, PolicyAgainstTheDatabasesPath) {
    schema::codec_path stock, accelerated{std::string("1.1")};
    EXPECT_EQ(stock.name(), "sql");
    EXPECT_EQ(accelerated.name(), "queen_ext");
    EXPECT_EQ(accelerated.segment_codec(), "zstd");
    EXPECT_NO_THROW(schema::enforce(config::extension_policy::auto_detect, stock));
    EXPECT_NO_THROW(schema::enforce(config::extension_policy::auto_detect, accelerated));
    EXPECT_THROW(schema::enforce(config::extension_policy::require, stock), std::runtime_error);
    EXPECT_NO_THROW(schema::enforce(config::extension_policy::require, accelerated));
    EXPECT_THROW(schema::enforce(config::extension_policy::off, accelerated), std::runtime_error);
    EXPECT_NO_THROW(schema::enforce(config::extension_policy::off, stock));
    EXPECT_NE(schema::describe(accelerated).find("codec path: queen_ext 1.1"), std::string::npos);
}

}  // namespace
}  // namespace queen
