#pragma once
// The progress line every 5 s, and the stall check: the run stops (stop_reason::stalled) when
// the measure of consumer work (settled deliveries, plus pipeline forwards) does not move for
// --stall-seconds.
#include "run_control.hpp"
#include "stats.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace queen::bench {

struct progress_view {
    std::function<std::string()> describe;    // "pushed …, consumed …" (without the time)
    std::function<std::uint64_t()> work;      // grows while consumers make progress
    bool watch_stall = false;                 // false: no consumers, never stalls
};

// Prints a progress line every 5 s until `finished`; stops the run when view.work() did not change for `stall` (zero: never).
boost::asio::awaitable<void> progress_loop(boost::asio::steady_timer& timer, const std::atomic<bool>& finished,
                                           run_control& control, const progress_view& view, steady::time_point start,
                                           std::chrono::seconds stall);

}  // namespace queen::bench
