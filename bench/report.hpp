#pragma once
// Turns the merged measurements into the result: throughput, latency percentiles, the
// verification verdicts and the conditions; rendered as a table or as one JSON object.
#include "ledger.hpp"
#include "options.hpp"
#include "run_control.hpp"
#include "stats.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace queen::bench {

struct run_facts {
    steady::time_point start, end;
    std::uint64_t completed = 0;  // deliveries settled by the consumers (first per stream)
    stop_reason reason = stop_reason::none;
    std::string fatal_detail;
    std::optional<steady::time_point> consumed_all_at;
    std::size_t reconnects = 0;
    std::string load_before, load_after;  // /proc/loadavg (1, 5, 15 min), noise indicator
    double client_cpu_seconds = 0;        // user + system time of this process
    std::uint64_t messages = 0;           // messages the producers were to send (duration mode: sent)
    nlohmann::json duration;              // duration mode's section (intervals.hpp), else null
};

struct result {
    nlohmann::json json;  // everything, see report.cpp
    int exit_code = 0;    // 0 ok, 1 failed checks or errors, 3 time limit
};

// verdicts: one per verified stream (fan-out group; else one), empty without consumers;
// stages: the pipeline's forwarding stages 0..S-2 (empty outside pipeline mode).
result build_result(const options& o, producer_stats& produced, consumer_stats& consumed,
                    const std::vector<verdict>& verdicts, std::vector<stage_stats>& stages, const run_facts& facts);

std::string render_table(const result& r);

// {"count","mean","p50","p90","p99","max"} in ms of r (sorts r's samples).
nlohmann::json latency_json(latency_recorder& r);
// n / seconds, 0 when seconds is not positive.
double rate_per_second(double n, double seconds);

}  // namespace queen::bench
