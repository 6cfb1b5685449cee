#pragma once
// The timing rule every micro-benchmark uses: the median of single calls.
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace queen::bench::micro {

// Median nanoseconds per call of f over `rounds` rounds (at least one).
inline double median_ns(int rounds, const std::function<void()>& f) {
    std::vector<double> ns;
    for (int r = 0; r < std::max(rounds, 1); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ns.begin(), ns.end());
    return ns[ns.size() / 2];
}

}  // namespace queen::bench::micro
