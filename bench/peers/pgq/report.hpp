#pragma once
// Turns the merged measurements into the result: throughput with queen_bench's definitions,
// the verification verdict, failures and the exit code; rendered as a table or one JSON line.
#include "consumer.hpp"
#include "options.hpp"
#include "producer.hpp"
#include "run_state.hpp"
#include "tally.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace pgq_bench {

struct run_facts {
    steady::time_point start, end;  // start gate released; all threads joined
    stop_reason reason = stop_reason::none;
    std::string detail;  // of the stop reason
    std::string load_before, load_after;  // /proc/loadavg (1, 5, 15 min): a noise indicator
};

struct result {
    nlohmann::json json;
    int exit_code = 0;  // 0 ok, 1 failed checks or errors, 3 time limit or stalled
};

// `v` is set in consume and both modes (the consumer ran).
result build_result(const options& o, const producer_stats& produced, const consumer_stats& consumed,
                    const std::optional<verdict>& v, const run_facts& facts);

std::string render_table(const result& r);

}  // namespace pgq_bench
