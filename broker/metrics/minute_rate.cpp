#include "metrics/minute_rate.hpp"

#include <chrono>

namespace queen::metrics {

void minute_rate::add(std::int64_t now_s, std::uint64_t n) {
    std::lock_guard lock(mutex_);
    auto& b = buckets_[static_cast<std::size_t>(now_s % 60)];
    if (b.second != now_s) b = bucket{now_s, 0};
    b.count += n;
}

double minute_rate::per_second(std::int64_t now_s) const {
    std::lock_guard lock(mutex_);
    std::uint64_t sum = 0;
    for (const auto& b : buckets_)
        if (b.second > now_s - 60 && b.second <= now_s) sum += b.count;
    return static_cast<double>(sum) / 60.0;
}

std::int64_t steady_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace queen::metrics
