#include "retry_policy.hpp"

#include <algorithm>

namespace queen::bench {

bool retryable(const http_result& r) { return r.ec || r.status >= 500 || r.status == 429; }

std::chrono::milliseconds retry_backoff(const http_result& r, unsigned attempt) {
    if (!r.retry_after.empty()) return std::chrono::seconds(1);
    return std::chrono::milliseconds(50u << std::min(attempt, 5u));
}

}  // namespace queen::bench
