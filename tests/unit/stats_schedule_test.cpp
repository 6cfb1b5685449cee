// The stats refresh schedule: the configured interval, stretched by the duty cycle when a
// refresh is long (services/housekeeper.hpp).
#include "services/housekeeper.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace {

using namespace std::chrono_literals;
using queen::services::next_stats_refresh;
using queen::services::stats_duty_divisor;

TEST(StatsSchedule, AShortRefreshKeepsTheInterval) {
    const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
    EXPECT_EQ(next_stats_refresh(t0, t0 + 50ms, 10s), t0 + 10s);
    EXPECT_EQ(next_stats_refresh(t0, t0, 10s), t0 + 10s);
}

TEST(StatsSchedule, ALongRefreshIsFollowedByAPauseOfItsDutyCycle) {
    const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
    // 3 s of counting (100,000 partitions here): the next starts 27 s after it ended.
    EXPECT_EQ(next_stats_refresh(t0, t0 + 3s, 10s), t0 + 3s + 3s * (stats_duty_divisor - 1));
    // Counting never takes more than its share of the time between starts.
    const auto next = next_stats_refresh(t0, t0 + 30s, 10s);
    EXPECT_GE((next - t0) / std::chrono::milliseconds(1), 30000 * stats_duty_divisor);
}

}  // namespace
