#pragma once
// When and how soon the consumers and pipeline workers retry a failed request.
#include "http_client.hpp"

#include <chrono>

namespace queen::bench {

// True for failures worth retrying with the same request: transport errors, 5xx and 429.
bool retryable(const http_result& r);

// Pause before retry `attempt` (0-based): 1 s when the broker sent Retry-After, else 50 ms doubling up to 1.6 s.
std::chrono::milliseconds retry_backoff(const http_result& r, unsigned attempt);

}  // namespace queen::bench
