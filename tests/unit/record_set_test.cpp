// Rows rendered by their column names (render/record_writer.hpp): dotted names nest, value kinds
// keep their JSON types, a prefix selects one object's members, NaN becomes null.
#include "render/record_writer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace queen::render {
namespace {

using nlohmann::json;
using db::record_set;
using db::value_kind;

record_set sample() {
    record_set rs;
    rs.columns = {"timestamp", "a.x", "a.y", "a.b.c", "d", "flag", "rate", "missing", "bad"};
    rs.kinds = {value_kind::text,    value_kind::integer, value_kind::integer, value_kind::integer, value_kind::integer,
                value_kind::boolean, value_kind::number,  value_kind::integer, value_kind::number};
    rs.rows = {{"2026-01-01T00:00:00.000000Z", "1", "2", "3", "4", "t", "0.50", std::nullopt, "NaN"}};
    return rs;
}

std::string record_text(const record_set& rs, std::string_view prefix = {}) {
    json_writer out;
    write_record(out, rs, 0, prefix);
    return out.take();
}

TEST(RecordSet, NestsDottedNamesAndKeepsKinds) {
    EXPECT_EQ(json::parse(record_text(sample())),
              json::parse(R"({"timestamp":"2026-01-01T00:00:00.000000Z","a":{"x":1,"y":2,"b":{"c":3}},"d":4,
                              "flag":true,"rate":0.50,"missing":null,"bad":null})"));
}

TEST(RecordSet, APrefixSelectsOneObjectsMembers) {
    EXPECT_EQ(record_text(sample(), "a."), R"({"x":1,"y":2,"b":{"c":3}})");
    json_writer out;
    out.begin_object();
    write_member(out, sample(), 0, "d");
    out.end_object();
    EXPECT_EQ(out.take(), R"({"d":4})");
}

TEST(RecordSet, WritesEveryRowInOrderAndReadsIntegers) {
    record_set rs;
    rs.columns = {"n"};
    rs.kinds = {value_kind::integer};
    rs.rows = {{"3"}, {"-1"}, {std::nullopt}};
    json_writer out;
    write_records(out, rs);
    EXPECT_EQ(out.take(), "[{\"n\":3},{\"n\":-1},{\"n\":null}]");
    EXPECT_EQ(rs.integer(0, "n"), 3);
    EXPECT_EQ(rs.integer(2, "n"), 0);
    EXPECT_THROW(rs.column("m"), std::out_of_range);
    record_set empty;
    json_writer none;
    write_records(none, empty);
    EXPECT_EQ(none.take(), "[]");
}

}  // namespace
}  // namespace queen::render
