#pragma once
// The wall clock as the broker stores and compares times: microseconds since the Unix epoch.
#include <chrono>
#include <cstdint>

namespace queen::util {

// Now, in microseconds since 1970-01-01T00:00:00Z.
inline std::int64_t wall_clock_us() noexcept {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace queen::util
