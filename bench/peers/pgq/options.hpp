#pragma once
// Command-line options of pgq_bench: parsing, defaults, validation and the condition line.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace pgq_bench {

enum class run_mode { produce, consume, both };

const char* to_string(run_mode m);

struct options {
    std::string conninfo;  // libpq conninfo of the benchmark database (empty: libpq defaults/env)
    std::string queue;     // empty on the command line: a fresh unique name
    bool queue_given = false;
    std::string consumer = "bench";
    run_mode mode = run_mode::both;
    std::size_t messages = 200000;
    std::size_t producers = 8;
    std::size_t batch = 100;  // events per producer transaction
    bool explicit_begin = false;  // BEGIN / insert statement / COMMIT instead of one implicit transaction
    std::size_t payload_bytes = 200;
    unsigned max_seconds = 600;
    unsigned stall_seconds = 60;  // stop when the consumer finishes no event for this long (0: never)
    unsigned idle_sleep_ms = 10;  // pause after next_batch returned NULL
    bool setup_only = false;      // --setup: create/configure the queue and exit
    bool run_pgqd = true;         // start and stop pgqd around the run
    std::string pgqd_bin = "pgqd";
    double ticker_period_s = 0.1;
    double ticker_max_lag_s = 0.1;
    std::size_t ticker_max_count = 500;
    bool json = false;      // print the JSON object instead of the table
    std::string json_out;   // append the JSON object (one line) to this file
    std::string label;
    bool quiet = false;     // no progress lines on stderr
};

struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Parses argv into `out`; throws usage_error. Returns false when --help was asked (usage printed).
bool parse_options(int argc, char** argv, options& out);

std::string usage_text();

// "mode=… messages=… …": every condition that shapes the figures, on one line.
std::string condition_line(const options& o);

}  // namespace pgq_bench
