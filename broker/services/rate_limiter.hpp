#pragma once
// Token buckets per key (a token's subject, or a client address): each key may make `burst`
// requests at once and `per_second` on average after that. Thread-safe. Memory stays bounded
// by the keys active within the last burst/per_second seconds: a full bucket is forgotten.
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace queen::services {

class rate_limiter {
public:
    using clock = std::chrono::steady_clock;

    // per_second 0: off (every request admitted).
    rate_limiter(double per_second, double burst);

    bool enabled() const noexcept { return per_second_ > 0; }

    // Takes one request from key's bucket: 0 when admitted, else the whole seconds (at least
    // 1) until the bucket has a request again, for Retry-After.
    int take(const std::string& key, clock::time_point now = clock::now());

private:
    struct bucket {
        double tokens;
        clock::time_point at;
    };
    // Tokens of b at `now` (refilled, capped at burst).
    double refilled(const bucket& b, clock::time_point now) const;
    // Drops the buckets that have refilled: they behave exactly like absent ones.
    void forget_full(clock::time_point now);

    double per_second_;
    double burst_;
    std::mutex mu_;
    std::unordered_map<std::string, bucket> buckets_;
    std::size_t sweep_at_ = 1024;  // size that triggers forget_full
};

}  // namespace queen::services
