#pragma once
// Turns the merged measurements into the result: throughput, latency percentiles, the
// verification verdict and the condition line; rendered as a table or as one JSON object.
#include "ledger.hpp"
#include "options.hpp"
#include "run_control.hpp"
#include "stats.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace queen::bench {

struct run_facts {
    steady::time_point start, end;
    std::uint64_t completed = 0;  // messages settled by the consumers (first deliveries)
    stop_reason reason = stop_reason::none;
    std::string fatal_detail;
    std::optional<steady::time_point> consumed_all_at;
    std::size_t reconnects = 0;
    std::string load_before, load_after;  // /proc/loadavg (1, 5, 15 min), noise indicator
    double client_cpu_seconds = 0;        // user + system time of this process
};

struct result {
    nlohmann::json json;  // everything, see report.cpp
    int exit_code = 0;    // 0 ok, 1 failed checks or errors, 3 time limit
};

result build_result(const options& o, producer_stats& produced, consumer_stats& consumed,
                    const std::optional<verdict>& v, const run_facts& facts);

std::string render_table(const result& r);

}  // namespace queen::bench
