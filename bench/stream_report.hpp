#pragma once
// Stream mode's result (stream_run.hpp): throughput (messages and cycles per second), the
// latencies, the checks and the conditions; as one JSON object or as a table.
#include "ledger.hpp"
#include "options.hpp"
#include "report.hpp"
#include "run_control.hpp"
#include "stats.hpp"
#include "stream_stage.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace queen::bench {

// The stored state of every lane of the source queue at one moment (state/get without keys).
struct state_totals {
    bool read = false;
    std::string error;             // why it could not be read
    std::uint64_t partitions = 0;  // partitions of the source queue
    std::uint64_t lanes_read = 0;  // state/get answers read (one per partition)
    std::uint64_t lanes_with_state = 0;
    std::uint64_t rows = 0;     // keys with open windows
    std::uint64_t windows = 0;  // open windows
    std::uint64_t counts = 0;   // the sum of their counts
};

struct stream_report_facts {
    stream_setup setup;
    state_totals before, after;
    nlohmann::json overview;  // this query's entry of GET /api/v1/resources/streams at the end (null: absent)
    producer_stats produced;
    stream_stats worked;
    verdict check;  // the messages of committed cycles: exactly once, in order
    steady::time_point start, end;
    std::uint64_t completed = 0;  // messages committed for the first time
    stop_reason reason = stop_reason::none;
    std::string fatal_detail;
    std::optional<steady::time_point> consumed_all_at;
    std::size_t reconnects = 0;
    std::string load_before, load_after;
    double client_cpu_seconds = 0;  // this process, from the start of the run to its end
    std::uint64_t messages = 0;     // messages the producers were to send (duration mode: sent)
    nlohmann::json duration;        // duration mode's section (intervals.hpp), else null
};

// "mode=stream messages=… partitions=… keys=… window=…": every condition, one line.
std::string stream_condition_line(const options& o, const stream_setup& s);

result build_stream_result(const options& o, stream_report_facts& f);

std::string render_stream_table(const result& r);

}  // namespace queen::bench
