// Parsing of the lease-extension and consumer-group bodies (api/shared/group_requests), without a database.
#include "api/shared/group_requests.hpp"
#include "domain/message_id.hpp"

#include <gtest/gtest.h>

#include <functional>

namespace queen::api {
namespace {

const limits lim{.max_payload_depth = 64};  // a test value; the broker reads the database's

bool is_bad_request(const std::function<void()>& f) {
    try {
        f();
    } catch (const api_error& e) {
        return e.code() == error_code::bad_request;
    }
    return false;
}

TEST(ExtendSeconds, DefaultsAndTolerance) {
    for (const char* body : {"", "  \n", "{}", "null", R"({"seconds":null})", R"({"other":1})"})
        EXPECT_EQ(parse_extend_seconds(body, lim), 60) << body;
    EXPECT_EQ(parse_extend_seconds(R"({"seconds":1})", lim), 1);
    EXPECT_EQ(parse_extend_seconds(R"({"seconds":30.0})", lim), 30);
    EXPECT_EQ(parse_extend_seconds(R"({"seconds":604800})", lim), 604800);
}

TEST(ExtendSeconds, RejectsWhatIsReallyWrong) {
    for (const char* body : {R"({"seconds":0})", R"({"seconds":-1})", R"({"seconds":604801})", R"({"seconds":1.5})",
                             R"({"seconds":"30"})", R"({"seconds":true})", R"({"seconds":{}})",
                             R"({"seconds":18446744073709551615})", R"({"seconds":1e300})", "[]", "3", "{"})
        EXPECT_TRUE(is_bad_request([&] { parse_extend_seconds(body, lim); })) << body;
}

TEST(SeekBody, ToEndOrTimestamp) {
    auto end = parse_seek(R"({"toEnd":true,"timestamp":null,"x":1})", lim);
    EXPECT_TRUE(end.to_end);
    EXPECT_FALSE(end.timestamp_us.has_value());
    auto at = parse_seek(R"({"timestamp":"2026-04-26T10:59:28.267966Z","toEnd":false})", lim);
    EXPECT_FALSE(at.to_end);
    ASSERT_TRUE(at.timestamp_us.has_value());
    EXPECT_EQ(domain::iso_time(*at.timestamp_us), "2026-04-26T10:59:28.267966Z");
    auto offset = parse_seek(R"({"timestamp":"2026-04-26T12:59:28+02:00"})", lim);
    EXPECT_EQ(domain::iso_time(*offset.timestamp_us), "2026-04-26T10:59:28.000000Z");
    auto leap = parse_seek(R"({"timestamp":"2024-02-29"})", lim);
    EXPECT_EQ(domain::iso_time(*leap.timestamp_us), "2024-02-29T00:00:00.000000Z");
}

TEST(SeekBody, RejectsNeitherBothAndMalformed) {
    for (const char* body : {"", "{}", "null", R"({"toEnd":false})", R"({"toEnd":"true"})", R"({"toEnd":1})",
                             R"({"timestamp":""})", R"({"timestamp":"now"})", R"({"timestamp":1700000000})",
                             R"({"timestamp":"2026-02-29T00:00:00Z"})", R"({"timestamp":"2026-04-31"})",
                             R"({"timestamp":"0000-01-01T00:00:00Z"})", R"({"timestamp":"2026-01-01T24:00:00Z"})",
                             R"({"toEnd":true,"timestamp":"2026-01-01T00:00:00Z"})", "[1]", "{bad"})
        EXPECT_TRUE(is_bad_request([&] { parse_seek(body, lim); })) << body;
}

TEST(SubscriptionBody, RequiresAValidTimestamp) {
    EXPECT_EQ(domain::iso_time(parse_subscription(R"({"subscriptionTimestamp":"2026-01-02T03:04:05.6Z"})", lim)),
              "2026-01-02T03:04:05.600000Z");
    for (const char* body : {"", "{}", R"({"subscriptionTimestamp":null})", R"({"subscriptionTimestamp":5})",
                             R"({"subscriptionTimestamp":"tomorrow"})", R"({"timestamp":"2026-01-01"})", "[]"})
        EXPECT_TRUE(is_bad_request([&] { parse_subscription(body, lim); })) << body;
}

TEST(GroupName, Limits) {
    EXPECT_NO_THROW(check_group_name("g", lim));
    EXPECT_NO_THROW(check_group_name(std::string(255, 'g'), lim));
    EXPECT_TRUE(is_bad_request([] { check_group_name(std::string(256, 'g'), lim); }));
    EXPECT_TRUE(is_bad_request([] { check_group_name(std::string("a\0b", 3), lim); }));
}

}  // namespace
}  // namespace queen::api
