#pragma once
// Events per second over the last 60 seconds, in 60 one-second buckets: O(1) per event and
// per read.
#include <array>
#include <cstdint>
#include <mutex>

namespace queen::metrics {

class minute_rate {
public:
    // Adds n events at now_s (seconds on a monotonic clock).
    void add(std::int64_t now_s, std::uint64_t n);
    // Events of the 60 seconds before now_s (the current second included), per second.
    double per_second(std::int64_t now_s) const;

private:
    struct bucket {
        std::int64_t second = -1;
        std::uint64_t count = 0;
    };
    mutable std::mutex mutex_;
    std::array<bucket, 60> buckets_{};
};

// Seconds on the steady clock, for minute_rate.
std::int64_t steady_seconds();

}  // namespace queen::metrics
