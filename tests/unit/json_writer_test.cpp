// The one JSON renderer: what it writes for each kind of value, verbatim raw text, and that
// misuse is refused instead of producing broken JSON.
#include "render/json_writer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

using queen::render::json_writer;

TEST(JsonWriter, WritesObjectsArraysAndScalarsWithSeparators) {
    json_writer w;
    w.begin_object().field("a", 1).field("b", true).field("c", nullptr).key("d").begin_array();
    w.value("x").value(-2).value(false).end_array().end_object();
    EXPECT_EQ(w.take(), R"({"a":1,"b":true,"c":null,"d":["x",-2,false]})");
}

TEST(JsonWriter, EscapesStringsAndKeepsUtf8) {
    json_writer w;
    const std::string nasty = std::string("q\"b\\n\n\t\x01\x1f", 10) + std::string(1, '\0') + "é€😀/";
    w.begin_object().field("key", nasty).end_object();
    const std::string text = w.take();
    EXPECT_EQ(text.find('\n'), std::string::npos);
    const auto back = nlohmann::json::parse(text);
    EXPECT_EQ(back.at("key").get<std::string>(), nasty);
    EXPECT_NE(text.find("é€😀/"), std::string::npos);  // not \u-escaped, no escaped slash
}

TEST(JsonWriter, WritesIntegerExtremesExactly) {
    json_writer w;
    w.begin_array()
        .value(std::numeric_limits<std::int64_t>::min())
        .value(std::numeric_limits<std::int64_t>::max())
        .value(std::numeric_limits<std::uint64_t>::max())
        .value(std::size_t{7})
        .end_array();
    EXPECT_EQ(w.take(), "[-9223372036854775808,9223372036854775807,18446744073709551615,7]");
}

TEST(JsonWriter, WritesDoublesRoundTripAndNonFiniteAsNull) {
    json_writer w;
    w.begin_array().value(0.1).value(-1.5e300).value(std::nan("")).value(INFINITY).end_array();
    const auto back = nlohmann::json::parse(w.take());
    EXPECT_EQ(back[0].get<double>(), 0.1);
    EXPECT_EQ(back[1].get<double>(), -1.5e300);
    EXPECT_TRUE(back[2].is_null());
    EXPECT_TRUE(back[3].is_null());
}

TEST(JsonWriter, OptionalsAreValuesOrNull) {
    json_writer w;
    std::optional<std::string> some = "s", none;
    std::optional<std::int64_t> n = 5;
    w.begin_object().field("some", some).field("none", none).field("n", n).end_object();
    EXPECT_EQ(w.take(), R"({"some":"s","none":null,"n":5})");
}

TEST(JsonWriter, RawTextIsCopiedVerbatimAndNeverParsed) {
    // 100,000 levels: a parser would need that much stack; the writer only copies.
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    json_writer w;
    w.begin_object().raw_field("data", deep).field("after", 1).key("list").begin_array();
    w.raw("{\"x\": 1.50}").raw("").end_array().end_object();
    const std::string text = w.take();
    EXPECT_EQ(text, "{\"data\":" + deep + ",\"after\":1,\"list\":[{\"x\": 1.50},null]}");
}

TEST(JsonWriter, RawTextWithANulByteIsCopiedNotRefused) {
    // A corrupt stored payload must not make its partition unpoppable.
    const std::string bytes("\"a\0b\"", 5);
    json_writer w;
    w.begin_array().raw(bytes).end_array();
    EXPECT_EQ(w.take(), "[" + bytes + "]");
}

TEST(JsonWriter, RefusesAnIncompleteAnswer) {
    json_writer w;
    w.begin_object().field("a", 1);
    EXPECT_THROW(w.take(), std::logic_error);
}

TEST(JsonWriter, RefusesAValueWhereAKeyBelongs) {
    json_writer w;
    w.begin_object();
    EXPECT_THROW(w.value(1), std::logic_error);
}

TEST(JsonWriter, RefusesClosingWhatIsNotOpen) {
    json_writer w;
    w.begin_array();
    EXPECT_THROW(w.end_object(), std::logic_error);
}

// Member names are checked when the broker is compiled: `field("a\"b", 1)` does not compile.
static_assert(queen::render::member_name("leaseId").text() == "leaseId");

TEST(JsonWriter, DynamicKeysAreEscapedLikeStrings) {
    json_writer w;
    w.begin_object().dynamic_key("orders \"eu\"\n").begin_object().field("n", 1).end_object();
    w.dynamic_key("b").value(2).end_object();
    const std::string text = w.take();
    EXPECT_EQ(text, "{\"orders \\\"eu\\\"\\n\":{\"n\":1},\"b\":2}");
    const auto parsed = nlohmann::json::parse(text);
    EXPECT_EQ(parsed["orders \"eu\"\n"]["n"], 1);
    json_writer bad;
    bad.begin_array();
    EXPECT_THROW(bad.dynamic_key("x"), std::logic_error);
}
