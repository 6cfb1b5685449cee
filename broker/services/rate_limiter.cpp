#include "services/rate_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace queen::services {

rate_limiter::rate_limiter(double per_second, double burst) : per_second_(per_second), burst_(std::max(1.0, burst)) {}

double rate_limiter::refilled(const bucket& b, clock::time_point now) const {
    const double elapsed = std::chrono::duration<double>(now - b.at).count();
    return std::min(burst_, b.tokens + std::max(0.0, elapsed) * per_second_);
}

void rate_limiter::forget_full(clock::time_point now) {
    for (auto it = buckets_.begin(); it != buckets_.end();) {
        if (refilled(it->second, now) >= burst_)
            it = buckets_.erase(it);
        else
            ++it;
    }
    sweep_at_ = std::max<std::size_t>(1024, 2 * buckets_.size());
}

int rate_limiter::take(const std::string& key, clock::time_point now) {
    if (!enabled()) return 0;
    std::lock_guard lock(mu_);
    if (buckets_.size() >= sweep_at_) forget_full(now);
    auto [it, fresh] = buckets_.try_emplace(key, bucket{burst_, now});
    bucket& b = it->second;
    b.tokens = fresh ? burst_ : refilled(b, now);
    b.at = now;
    if (b.tokens >= 1) {
        b.tokens -= 1;
        return 0;
    }
    return std::max(1, static_cast<int>(std::ceil((1 - b.tokens) / per_second_)));
}

}  // namespace queen::services
