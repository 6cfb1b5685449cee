// db::redact_passwords and db::carries_password: passwords out of connection strings in both
// forms and out of messages that quote them. No database needed.
#include "db/conninfo.hpp"

#include <gtest/gtest.h>

namespace {

using queen::db::carries_password;
using queen::db::redact_passwords;

TEST(ConninfoRedact, KeywordValuesAreMaskedQuotedOrNot) {
    EXPECT_EQ(redact_passwords("host=db1 password=s3cret dbname=x"), "host=db1 password=*** dbname=x");
    EXPECT_EQ(redact_passwords("host=db1 password = 's3 c\\'ret' dbname=x"), "host=db1 password = *** dbname=x");
    EXPECT_EQ(redact_passwords("password=a\nnext line"), "password=***\nnext line");
    EXPECT_EQ(redact_passwords("p0=host=db1 password=a, p1=host=db2 password=b"),
              "p0=host=db1 password=*** p1=host=db2 password=***");
    EXPECT_EQ(redact_passwords("PGPASSWORD=x is not a keyword"), "PGPASSWORD=x is not a keyword");
    EXPECT_EQ(redact_passwords("host=db1 dbname=x"), "host=db1 dbname=x");
}

TEST(ConninfoRedact, UrlUserInformationAndQueryAreMasked) {
    EXPECT_EQ(redact_passwords("postgresql://queen:s3cret@db1:5432/shard0"), "postgresql://queen:***@db1:5432/shard0");
    EXPECT_EQ(redact_passwords("shard postgres://u:p%40ss@db1/x?sslmode=require&password=q&connect_timeout=5: failed"),
              "shard postgres://u:***@db1/x?sslmode=require&password=***&connect_timeout=5: failed");
    EXPECT_EQ(redact_passwords("postgresql://queen@db1/shard0"), "postgresql://queen@db1/shard0");
    EXPECT_EQ(redact_passwords("postgresql://db1:5432/x"), "postgresql://db1:5432/x");
}

TEST(ConninfoRedact, CarriesPasswordTellsEitherForm) {
    EXPECT_TRUE(carries_password("host=db1 password=x"));
    EXPECT_TRUE(carries_password("postgresql://u:x@db1/d"));
    EXPECT_TRUE(carries_password("postgresql://u@db1/d?password=x"));
    EXPECT_FALSE(carries_password("postgresql://u@db1:5432/d"));
    EXPECT_FALSE(carries_password("host=db1 user=queen"));
}

}  // namespace
