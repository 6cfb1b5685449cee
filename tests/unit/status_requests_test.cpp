// The status and analytics windows (api/observability/status_requests.hpp): defaults, filters and the 400s.
#include "api/observability/status_requests.hpp"

#include <gtest/gtest.h>

namespace queen::api {
namespace {

const limits lim{.max_payload_depth = 64};
constexpr std::int64_t now = 1'764'547'200'000'000;  // 2025-12-01T00:00:00Z

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const api_error& e) {
        return std::to_string(static_cast<int>(status_of(e.code()))) + " " + e.what();
    }
    return "";
}

TEST(StatusWindow, DefaultsToTheSpanBeforeNow) {
    const auto w = parse_status_window({}, lim, std::chrono::hours(1), now);
    EXPECT_EQ(w.to_us, now);
    EXPECT_EQ(w.from_us, now - 3'600'000'000LL);
    EXPECT_FALSE(w.queue || w.namespace_name || w.task);
    const auto f = parse_status_window({{"from", "2025-11-30T00:00:00Z"}, {"queue", "q"}, {"task", ""}}, lim,
                                       std::chrono::hours(1), now);
    EXPECT_EQ(f.from_us, now - 86'400'000'000LL);
    EXPECT_EQ(f.queue, "q");
    EXPECT_FALSE(f.task);  // empty: no filter
}

TEST(StatusWindow, BadValuesAre400NamingTheParameter) {
    EXPECT_EQ(error_of([] { parse_status_window({{"from", "x"}}, lim, std::chrono::hours(1), now); }),
              "400 from must be an ISO-8601 time stamp, got 'x'");
    EXPECT_EQ(error_of([] {
                  parse_status_window({{"from", "2025-12-02T00:00:00Z"}}, lim, std::chrono::hours(1), now);
              }),
              "400 from must not be after to");
    EXPECT_NE(error_of([] { parse_status_window({{"queue", std::string(300, 'q')}}, lim, std::chrono::hours(1), now); })
                  .find("400 queue"),
              std::string::npos);
}

TEST(StatusAnalytics, IntervalsAndTheirBound) {
    EXPECT_EQ(parse_status_analytics({}, lim, now).interval, analytics_interval::hour);
    EXPECT_EQ(parse_status_analytics({}, lim, now).window.from_us, now - 86'400'000'000LL);
    EXPECT_EQ(parse_status_analytics({{"interval", "day"}}, lim, now).interval, analytics_interval::day);
    EXPECT_EQ(error_of([] { parse_status_analytics({{"interval", "week"}}, lim, now); }),
              "400 interval must be minute, hour or day, got 'week'");
    // 10,000 minutes is the most; 10,001 buckets is refused.
    EXPECT_EQ(error_of([] {
                  parse_status_analytics({{"interval", "minute"}, {"from", "2025-11-24T01:21:00Z"}}, lim, now);
              }),
              "");
    EXPECT_NE(error_of([] {
                  parse_status_analytics({{"interval", "minute"}, {"from", "2025-11-24T01:20:00Z"}}, lim, now);
              }).find("at most 10000"),
              std::string::npos);
}

}  // namespace
}  // namespace queen::api
