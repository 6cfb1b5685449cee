#pragma once
// Duration mode's throughput per interval: every --interval-seconds from the start until the
// deadline (the last interval is shorter when the duration is not a multiple), the messages
// the producers got answered and the messages the consumers acked for the first time in that
// interval. Each interval is one JSON line {"type":"interval",…}: on stdout with --json (else
// a text line), and appended to --json-out; the run's result repeats them under "duration".
#include "options.hpp"
#include "run_control.hpp"
#include "stats.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace queen::bench {

// Ends of the intervals in seconds from the start: S, 2S, … and the duration itself last.
std::vector<unsigned> interval_ends(unsigned duration_seconds, unsigned interval_seconds);

// Cumulative counters at an interval's end.
struct interval_sample {
    double at_seconds = 0;  // measured time since the start
    std::uint64_t pushed = 0;
    std::uint64_t consumed = 0;
};

// {"type":"interval","index":k,…}: the interval between two samples (k from 1).
nlohmann::json interval_json(const options& o, unsigned index, const interval_sample& from, const interval_sample& to,
                             const std::string& load_average);

// "interval 3 (120-180 s): pushed 1200000 (20000/s), consumed …": the text form of interval_json.
std::string interval_text(const nlohmann::json& record);

// The intervals collected so far (written by the interval loop, read after the run).
struct interval_log {
    std::mutex mutex;
    std::vector<nlohmann::json> records;
};

struct interval_sources {
    std::function<std::uint64_t()> pushed;    // items answered to the producers so far
    std::function<std::uint64_t()> consumed;  // first deliveries settled so far
    std::function<std::string()> load_average;
};

// Samples at every interval end until the deadline, or until `finished` (the timer is cancelled then).
boost::asio::awaitable<void> interval_loop(boost::asio::steady_timer& timer, const std::atomic<bool>& finished,
                                           const options& o, steady::time_point start, interval_sources sources,
                                           interval_log& log);

// The result's "duration" section: settings, the intervals, the median / min / max consume rate
// of the full intervals, messages sent and how long the drain after the deadline took.
nlohmann::json duration_section(const options& o, interval_log& log, std::uint64_t messages_sent,
                                std::optional<double> drain_seconds);

// Median of the values (the mean of the middle two for an even count), 0 for none.
double median_of(std::vector<double> values);

}  // namespace queen::bench
