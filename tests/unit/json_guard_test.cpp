// The body checks that run before any JSON parser (api/json_guard) and the payload rules of
// the request parsers (docs/json-input.md), without a database.
#include "api/shared/json_guard.hpp"
#include "api/shared/push_request.hpp"
#include "api/shared/requests.hpp"
#include "api/admin/trace_requests.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace queen::api {
namespace {

using nlohmann::json;

constexpr std::size_t test_depth = 64;  // a test value; the broker reads the database's
const limits lim{.max_payload_depth = test_depth};

std::string nested_arrays(std::size_t depth, const std::string& inner = "") {
    return std::string(depth, '[') + inner + std::string(depth, ']');
}

// The message of the bad_request that f throws ("" when it throws nothing).
std::string refusal(const std::function<void()>& f) {
    try {
        f();
    } catch (const api_error& e) {
        EXPECT_EQ(e.code(), error_code::bad_request);
        return e.what();
    }
    return "";
}

TEST(JsonGuard, DepthIsCountedOutsideStringsOnly) {
    const std::size_t body_limit = test_depth + envelope_depth_allowance;
    EXPECT_EQ(refusal([&] { check_json_text(nested_arrays(body_limit), test_depth); }), "");
    const auto deep = refusal([&] { check_json_text(nested_arrays(body_limit + 1), test_depth); });
    EXPECT_NE(deep.find("nests deeper than 72 levels at byte 72"), std::string::npos) << deep;
    EXPECT_NE(deep.find("at most 64 levels"), std::string::npos) << deep;
    // Brackets inside strings, escaped quotes included, do not nest.
    EXPECT_EQ(refusal([&] { check_json_text("[\"" + std::string(10000, '[') + "\\\"{{{\"]", test_depth); }), "");
    // Closing brackets bring the depth back: a long flat list is fine.
    std::string wide = "[";
    for (int i = 0; i < 100000; ++i) wide += "[[1]],";
    wide += "1]";
    EXPECT_EQ(refusal([&] { check_json_text(wide, test_depth); }), "");
}

TEST(JsonGuard, AMillionLevelsAreRefusedWithoutRecursion) {
    const std::string body = R"({"items":[{"queue":"q","payload":)" + nested_arrays(1000000) + "}]}";
    EXPECT_NE(refusal([&] { (void)parse_json_body(body, lim); }).find("nests deeper than"), std::string::npos);
    const std::string objects = [] {
        std::string s;
        for (int i = 0; i < 1000000; ++i) s += "{\"a\":";
        return s + "1" + std::string(1000000, '}');
    }();
    EXPECT_NE(refusal([&] { (void)parse_json_body(objects, lim); }).find("nests deeper than"), std::string::npos);
}

TEST(JsonGuard, InvalidUtf8IsNamedWithItsByte) {
    EXPECT_EQ(refusal([] { check_json_text("[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"]", 8); }), "");
    for (const std::string bad : {"\xc3", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", "\x80"}) {
        const auto why = refusal([&] { check_json_text("[\"ab" + bad + "\"]", 8); });
        EXPECT_EQ(why, "invalid UTF-8 at byte 4");
    }
}

TEST(JsonGuard, UnpairedSurrogatesAreRefused) {
    EXPECT_EQ(refusal([] { check_json_text(R"(["\ud83d\ude00", "\u00e9", "\\ud800"])", 8); }), "");
    EXPECT_EQ(refusal([] { check_json_text(R"(["x\ud800"])", 8); }),
              "a string holds the unpaired UTF-16 surrogate \\uD800 at byte 3; PostgreSQL cannot store it");
    EXPECT_NE(refusal([] { check_json_text(R"(["\ud800\u0041"])", 8); }).find("\\uD800"), std::string::npos);
    EXPECT_NE(refusal([] { check_json_text(R"(["\udc00"])", 8); }).find("\\uDC00"), std::string::npos);
    EXPECT_NE(refusal([] { check_json_text(R"({"\uDBFF": 1})", 8); }).find("\\uDBFF"), std::string::npos);
}

TEST(JsonGuard, RawControlCharactersInStringsAreNamed) {
    EXPECT_EQ(refusal([] { check_json_text(std::string("[\"a\0b\"]", 7), 8); }),
              "a string holds the control character 0x00 unescaped at byte 3");
    EXPECT_NE(refusal([] { check_json_text("[\"a\nb\"]", 8); }).find("0x0a"), std::string::npos);
    EXPECT_EQ(refusal([] { check_json_text("[\n1\t]\r\n", 8); }), "");  // white space between tokens
    // Found by pop_answer_fuzz: nlohmann's parser stops at a NUL byte, so what followed it
    // was ignored; it is refused here, wherever it stands.
    EXPECT_EQ(refusal([] { check_json_text(std::string("{\"a\":1}\0{\"junk\"", 13), 8); }),
              "the control character 0x00 at byte 7 is not JSON");
    EXPECT_NE(refusal([] { (void)parse_json_body(std::string("{\"items\":[]}\0x", 15), lim); }).find("0x00"),
              std::string::npos);
}

TEST(JsonGuard, NestingDepthOfParsedValues) {
    EXPECT_EQ(json_nesting_depth(json(1), 10), 0u);
    EXPECT_EQ(json_nesting_depth(json::array(), 10), 1u);
    EXPECT_EQ(json_nesting_depth(json::parse(R"({"a":[1],"b":{"c":{"d":[]}}})"), 10), 4u);
    // It stops counting past stop_above.
    EXPECT_EQ(json_nesting_depth(json::parse(nested_arrays(50)), 5), 6u);
}

TEST(JsonGuard, PayloadAtTheLimitIsAcceptedAndOneDeeperIsRefused) {
    auto push_of = [](const std::string& payload) {
        return R"({"items":[{"queue":"q","payload":)" + payload + "}]}";
    };
    auto items = parse_push(push_of(nested_arrays(test_depth, "1")), lim).items;
    ASSERT_EQ(items.size(), 1u);
    EXPECT_EQ(items[0].payload, nested_arrays(test_depth, "1"));
    EXPECT_EQ(refusal([&] { parse_push(push_of(nested_arrays(test_depth + 1)), lim); }),
              "items[0].payload nests deeper than 64 levels, the limit for payloads");
    // The envelope does not count against the payload: a transaction wraps two more levels.
    const std::string tx = R"({"operations":[{"type":"push","items":[{"queue":"q","payload":)" +
                           nested_arrays(test_depth) + "}]}]}";
    EXPECT_EQ(refusal([&] { (void)parse_json_body(tx, lim); }), "");
}

TEST(JsonGuard, NulInStringFieldsIsRefusedAndInPayloadsKept) {
    EXPECT_NE(refusal([] { parse_push(R"({"items":[{"queue":"q","transactionId":"a\u0000"}]})", lim); })
                  .find("transactionId must not contain NUL"),
              std::string::npos);
    EXPECT_NE(refusal([] {
                  parse_ack(json::parse(R"({"transactionId":"t","partitionId":"1","error":"x\u0000y"})"), lim);
              }).find("error must not contain NUL"),
              std::string::npos);
    auto items = parse_push(R"({"items":[{"queue":"q","payload":{"k":"a\u0000b"}}]})", lim).items;
    EXPECT_EQ(items.at(0).payload, R"({"k":"a\u0000b"})");
    // Traces are stored as jsonb, which cannot hold it.
    EXPECT_NE(refusal([] {
                  parse_trace(json::parse(R"({"transactionId":"t","partitionId":"1","data":[{"\u0000":1}]})"), lim);
              }).find("\\u0000"),
              std::string::npos);
}

TEST(JsonGuard, TraceDataFollowsThePayloadDepthLimit) {
    const std::string ok = R"({"transactionId":"t","partitionId":"1","data":)" + nested_arrays(test_depth) + "}";
    EXPECT_EQ(parse_trace(json::parse(ok), lim).data, nested_arrays(test_depth));
    const std::string deep = R"({"transactionId":"t","partitionId":"1","data":)" + nested_arrays(test_depth + 1) + "}";
    EXPECT_EQ(refusal([&] { parse_trace(json::parse(deep), lim); }),
              "data nests deeper than 64 levels, the limit for payloads");
}

TEST(JsonGuard, NumbersBeyondDoublesAreNamed) {
    EXPECT_NE(refusal([] { (void)parse_json_body(R"({"items":[{"queue":"q","payload":1e400}]})", lim); })
                  .find("a number is out of range"),
              std::string::npos);
    EXPECT_NE(refusal([] { (void)parse_push(R"({"items":[{"queue":"q","payload":[1,-1e400]}]})", lim); })
                  .find("a number is out of range"),
              std::string::npos);
    // Every other number is kept as sent: past 64 bits, past 2^53, below the smallest double.
    const std::string numbers = "[1e308,-1e-400,12345678901234567890,123456789012345678901234567890,1.10,-0]";
    auto items = parse_push(R"({"items":[{"queue":"q","payload":)" + numbers + "}]}", lim).items;
    EXPECT_EQ(items.at(0).payload, numbers);
}

}  // namespace
}  // namespace queen::api
