// The abuse limits' pieces: token buckets, per-address slots, header field counts, settings.
#include "config/abuse_limits.hpp"
#include "services/rate_limiter.hpp"
#include "http/header_limits.hpp"
#include "http/per_client_slots.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace queen {
namespace {

using namespace std::chrono_literals;

TEST(RateLimiter, ABurstPassesThenOneRequestPerInterval) {
    services::rate_limiter limiter(2, 3);  // 2 a second, bursts of 3
    const auto t0 = services::rate_limiter::clock::time_point{} + 100s;
    EXPECT_EQ(limiter.take("a", t0), 0);
    EXPECT_EQ(limiter.take("a", t0), 0);
    EXPECT_EQ(limiter.take("a", t0), 0);
    EXPECT_EQ(limiter.take("a", t0), 1);  // empty: half a second away, rounded up
    EXPECT_EQ(limiter.take("b", t0), 0);  // another key, another bucket
    EXPECT_EQ(limiter.take("a", t0 + 499ms), 1);
    EXPECT_EQ(limiter.take("a", t0 + 500ms), 0);
    EXPECT_EQ(limiter.take("a", t0 + 500ms), 1);
    // A long pause refills no more than the burst.
    const auto later = t0 + 1h;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.take("a", later), 0);
    EXPECT_EQ(limiter.take("a", later), 1);
}

TEST(RateLimiter, RetryAfterCoversTheWholeWait) {
    services::rate_limiter slow(0.25, 1);  // one request every 4 s
    const auto t0 = services::rate_limiter::clock::time_point{} + 10s;
    EXPECT_EQ(slow.take("k", t0), 0);
    EXPECT_EQ(slow.take("k", t0), 4);
    EXPECT_EQ(slow.take("k", t0 + 3s), 1);
    EXPECT_EQ(slow.take("k", t0 + 4s), 0);
}

TEST(RateLimiter, OffAdmitsEverything) {
    services::rate_limiter off(0, 0);
    EXPECT_FALSE(off.enabled());
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(off.take("k"), 0);
}

TEST(RateLimiter, ManyKeysKeepTheirBucketsExact) {
    // More keys than a sweep's threshold: the emptied buckets must survive the sweep.
    services::rate_limiter limiter(1, 1);
    const auto t0 = services::rate_limiter::clock::time_point{} + 10s;
    for (int i = 0; i < 5000; ++i) ASSERT_EQ(limiter.take("k" + std::to_string(i), t0), 0);
    for (int i = 0; i < 5000; ++i) ASSERT_EQ(limiter.take("k" + std::to_string(i), t0), 1) << i;
    for (int i = 0; i < 5000; ++i) ASSERT_EQ(limiter.take("k" + std::to_string(i), t0 + 1s), 0) << i;
}

TEST(PerClientSlots, AnAddressHoldsAtMostTheLimitAndSlotsComeBack) {
    http::per_client_slots slots(2);
    auto a1 = slots.try_take("10.0.0.1");
    auto a2 = slots.try_take("10.0.0.1");
    ASSERT_TRUE(a1 && a2);
    EXPECT_FALSE(slots.try_take("10.0.0.1"));
    EXPECT_TRUE(slots.try_take("10.0.0.2"));  // taken and given back at once
    EXPECT_EQ(slots.held("10.0.0.1"), 2u);
    EXPECT_EQ(slots.held("10.0.0.2"), 0u);
    a1.reset();
    EXPECT_EQ(slots.held("10.0.0.1"), 1u);
    auto a3 = std::move(a2);
    EXPECT_EQ(slots.held("10.0.0.1"), 1u);  // a moved slot is still one slot
    EXPECT_TRUE(slots.try_take("10.0.0.1"));
}

TEST(PerClientSlots, ASlotOutlivesItsCounter) {
    std::optional<http::per_client_slots::slot> kept;
    {
        http::per_client_slots slots(1);
        kept = slots.try_take("::1");
        ASSERT_TRUE(kept);
    }
    kept.reset();  // gives back to a counter that is gone: no crash
}

TEST(PerClientSlots, ZeroIsUnlimited) {
    http::per_client_slots slots(0);
    std::vector<http::per_client_slots::slot> held;
    for (int i = 0; i < 100; ++i) {
        auto s = slots.try_take("a");
        ASSERT_TRUE(s);
        held.push_back(std::move(*s));
    }
}

TEST(HeaderLimits, TheFieldCountIsCheckedOnlyWhenLimited) {
    http::bhttp::request_header<> header;
    for (int i = 0; i < 5; ++i) header.insert("X-" + std::to_string(i), "v");
    EXPECT_FALSE(http::header_count_violation(header, {64 * 1024, 0}));
    EXPECT_FALSE(http::header_count_violation(header, {64 * 1024, 5}));
    auto v = http::header_count_violation(header, {64 * 1024, 4});
    ASSERT_TRUE(v);
    EXPECT_EQ(*v, "request has 5 header fields, more than the limit of 4");
}

TEST(AbuseLimitsConfig, DefaultsAreOffAndValuesAreChecked) {
    std::map<std::string, std::string> sources;
    config::env_map none;
    config::env_reader defaults(none, sources);
    const auto d = config::read_abuse_limits(defaults);
    EXPECT_EQ(d.max_connections_per_client, 0u);
    EXPECT_EQ(d.max_longpolls_per_client, 0u);
    EXPECT_EQ(d.max_header_bytes, 64u * 1024);
    EXPECT_EQ(d.max_header_count, 0u);
    EXPECT_EQ(d.rate_per_second, 0);

    config::env_map set{{"QUEEN_RATE_LIMIT_PER_SECOND", "20"}, {"QUEEN_MAX_HEADER_COUNT", "50"}};
    config::env_reader r(set, sources);
    const auto l = config::read_abuse_limits(r);
    EXPECT_EQ(l.rate_per_second, 20);
    EXPECT_EQ(l.rate_burst, 20);  // one second's worth
    EXPECT_EQ(l.max_header_count, 50u);
    EXPECT_EQ(sources["rate_limit_per_second"], "QUEEN_RATE_LIMIT_PER_SECOND");

    config::env_map tiny{{"QUEEN_MAX_HEADER_BYTES", "100"}};
    config::env_reader bad(tiny, sources);
    try {
        config::read_abuse_limits(bad);
        FAIL() << "a 100-byte header limit was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("QUEEN_MAX_HEADER_BYTES"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace queen
