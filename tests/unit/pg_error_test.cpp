// pg_error classification and pg_result decoding; no database needed.
#include "db/pg_error.hpp"
#include "db/pg_result.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using queen::db::classify_sqlstate;
using queen::db::pg_error;
using queen::db::pg_error_kind;
// (libpq declares a global `struct pg_result`, so the class is named with its namespace.)
using db_result = queen::db::pg_result;

TEST(PgError, ClassifiesConnectionLoss) {
    for (const char* s : {"08000", "08003", "08006", "08001", "08004", "08P01", "57P01", "57P02", "57P03"})
        EXPECT_EQ(classify_sqlstate(s), pg_error_kind::connection_lost) << s;
    EXPECT_EQ(classify_sqlstate("57014"), pg_error_kind::timed_out);  // query_canceled (statement_timeout)
    EXPECT_EQ(classify_sqlstate("57P04"), pg_error_kind::other);
}

TEST(PgError, ClassifiesConstraintAndConcurrencyErrors) {
    EXPECT_EQ(classify_sqlstate("23505"), pg_error_kind::unique_violation);
    EXPECT_EQ(classify_sqlstate("23503"), pg_error_kind::other);  // foreign key: not unique
    EXPECT_EQ(classify_sqlstate("40001"), pg_error_kind::serialization);
    EXPECT_EQ(classify_sqlstate("40P01"), pg_error_kind::deadlock);
    EXPECT_EQ(classify_sqlstate("40002"), pg_error_kind::other);
}

TEST(PgError, ClassifiesRaisedDomainErrors) {
    EXPECT_EQ(classify_sqlstate("QN001"), pg_error_kind::raised);
    EXPECT_EQ(classify_sqlstate("QN999"), pg_error_kind::raised);
    EXPECT_EQ(classify_sqlstate("P0001"), pg_error_kind::other);  // plain RAISE EXCEPTION
}

TEST(PgError, ClassifiesOddInputAsOther) {
    EXPECT_EQ(classify_sqlstate(""), pg_error_kind::other);
    EXPECT_EQ(classify_sqlstate("08"), pg_error_kind::other);
    EXPECT_EQ(classify_sqlstate("22012"), pg_error_kind::other);
    EXPECT_EQ(classify_sqlstate("42P01"), pg_error_kind::other);
}

TEST(PgError, RetryableKinds) {
    EXPECT_TRUE(pg_error(pg_error_kind::connection_lost, "08006", "x").retryable());
    EXPECT_TRUE(pg_error(pg_error_kind::serialization, "40001", "x").retryable());
    EXPECT_TRUE(pg_error(pg_error_kind::deadlock, "40P01", "x").retryable());
    EXPECT_FALSE(pg_error(pg_error_kind::unique_violation, "23505", "x").retryable());
    EXPECT_FALSE(pg_error(pg_error_kind::raised, "QN001", "x").retryable());
    EXPECT_FALSE(pg_error(pg_error_kind::other, "22012", "x").retryable());
}

TEST(PgError, CarriesStateAndMessage) {
    pg_error e(pg_error_kind::raised, "QN004", "queue not found");
    EXPECT_EQ(e.kind(), pg_error_kind::raised);
    EXPECT_EQ(e.sqlstate(), "QN004");
    EXPECT_STREQ(e.what(), "queue not found");
    const std::runtime_error& base = e;
    EXPECT_STREQ(base.what(), "queue not found");
}

namespace {

// Builds a one-row result by hand: columns (name, type oid, format) and raw values.
struct column_spec {
    const char* name;
    Oid type;
    int format;
    std::string value;
    bool null = false;
};

db_result make_result(const std::vector<column_spec>& cols) {
    PGresult* r = PQmakeEmptyPGresult(nullptr, PGRES_TUPLES_OK);
    std::vector<PGresAttDesc> attrs(cols.size());
    for (std::size_t i = 0; i < cols.size(); ++i) {
        attrs[i] = PGresAttDesc{const_cast<char*>(cols[i].name), 0, 0, cols[i].format, cols[i].type, -1, -1};
    }
    EXPECT_TRUE(PQsetResultAttrs(r, static_cast<int>(attrs.size()), attrs.data()));
    for (std::size_t i = 0; i < cols.size(); ++i) {
        if (cols[i].null)
            EXPECT_TRUE(PQsetvalue(r, 0, static_cast<int>(i), nullptr, -1));
        else
            EXPECT_TRUE(PQsetvalue(r, 0, static_cast<int>(i), const_cast<char*>(cols[i].value.data()),
                                   static_cast<int>(cols[i].value.size())));
    }
    return db_result(r);
}

}  // namespace

TEST(PgResult, DecodesTextAndBinaryIntegers) {
    auto res = make_result({
        {"t", 20, 0, "-9000000000"},
        {"i2", 21, 1, std::string("\xff\xfe", 2)},                   // -2
        {"i4", 23, 1, std::string("\x00\x01\x00\x00", 4)},           // 65536
        {"i8", 20, 1, std::string("\x00\x00\x00\x02\x00\x00\x00\x01", 8)},  // 8589934593
        {"neg8", 20, 1, std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8)},  // -1
        {"b", 16, 1, std::string("\x01", 1)},
        {"tb", 16, 0, "f"},
        {"n", 20, 0, "", true},
    });
    EXPECT_EQ(res.rows(), 1);
    EXPECT_EQ(res.columns(), 8);
    EXPECT_EQ(res.int64(0, res.column("t")), -9000000000LL);
    EXPECT_EQ(res.int64(0, res.column("i2")), -2);
    EXPECT_EQ(res.int64(0, res.column("i4")), 65536);
    EXPECT_EQ(res.int64(0, res.column("i8")), 8589934593LL);
    EXPECT_EQ(res.int64(0, res.column("neg8")), -1);
    EXPECT_TRUE(res.boolean(0, res.column("b")));
    EXPECT_FALSE(res.boolean(0, res.column("tb")));
    EXPECT_TRUE(res.binary(1));
    EXPECT_FALSE(res.binary(0));
    EXPECT_TRUE(res.is_null(0, 7));
    EXPECT_FALSE(res.opt_text(0, 7).has_value());
    EXPECT_EQ(res.opt_text(0, 0).value(), "-9000000000");
    EXPECT_THROW(res.int64(0, 7), std::runtime_error);
    EXPECT_THROW(res.column("missing"), std::out_of_range);
    EXPECT_THROW(res.text(1, 0), std::out_of_range);
    auto bytes = res.bytes(0, 2);
    ASSERT_EQ(bytes.size(), 4u);
    EXPECT_EQ(bytes[1], 1);
}

TEST(PgResult, RejectsNonIntegers) {
    auto res = make_result({{"x", 25, 0, "12abc"}, {"y", 25, 1, "abc"}});
    EXPECT_THROW(res.int64(0, 0), std::runtime_error);
    EXPECT_THROW(res.int64(0, 1), std::runtime_error);
}

TEST(PgResult, EmptyResult) {
    db_result res;
    EXPECT_EQ(res.rows(), 0);
    EXPECT_EQ(res.columns(), 0);
    EXPECT_EQ(res.get(), nullptr);
}
