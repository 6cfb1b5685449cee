#pragma once
// Command-line options of queen_bench: parsing, defaults and validation (the condition line
// and the JSON conditions are in conditions.hpp, the help text in usage.cpp).
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace queen::bench {

enum class run_mode { push, consume, both, pipeline, stream };

const char* to_string(run_mode m);

struct options {
    std::string url = "http://127.0.0.1:6632";
    std::string host = "127.0.0.1";  // parsed from url
    std::string port = "6632";       // parsed from url
    std::string base_path;           // parsed from url, without a trailing '/'
    // --header NAME:VALUE (repeatable): sent with every request, e.g. a tenant header.
    std::vector<std::pair<std::string, std::string>> headers;

    std::size_t messages = 100000;  // duration mode: the most seqs the producers may use
    bool messages_given = false;
    std::size_t partitions = 100;
    std::size_t connections = 16;
    std::size_t producers = 0;  // resolved from connections/mode unless given
    std::size_t consumers = 0;
    std::size_t push_batch = 100;
    std::size_t pop_batch = 100;
    std::size_t pop_partitions = 1;  // `partitions` query parameter of the queue-wide pop
    std::size_t payload_bytes = 200;
    std::string queue;  // empty on the command line: a fresh unique name
    bool queue_given = false;
    run_mode mode = run_mode::both;
    std::string consumer_group;  // empty: queue mode
    std::size_t groups = 0;      // fan-out: consumer groups <queue>-g0..g{G-1} (0: off)
    std::size_t rate = 0;        // offered push rate, messages/s over all producers (0: unpaced)
    std::size_t stages = 4;      // pipeline: queues <queue>-s0..s{S-1}
    std::size_t inject_tx_failures = 0;  // pipeline: every K-th forward transaction is made to fail
    std::size_t stream_keys = 4;    // stream: keys k0..k{K-1} per partition (stream_stage.hpp)
    unsigned window_ms = 1000;      // stream: the tumbling window
    unsigned lateness_ms = 500;     // stream: a window closes at max event time - lateness
    bool wait = false;
    unsigned wait_timeout_ms = 2000;
    bool auto_ack = false;
    bool dedup = true;  // transactionIds are always set by the client
    unsigned max_seconds = 600;
    bool max_seconds_given = false;
    // Duration mode (0: off, run --messages): producers push for this long, consumers then drain.
    unsigned duration_seconds = 0;
    unsigned interval_seconds = 60;  // duration mode: one throughput record per interval
    unsigned drain_seconds = 300;    // duration mode: time the consumers get after the deadline
    unsigned stall_seconds = 60;  // stop when consumers settle nothing for this long (0: never)
    unsigned idle_sleep_ms = 10;  // pause after an empty pop without --wait
    unsigned request_timeout_s = 60;
    // One: the connections share one io_context, and a second thread only adds futex wake-ups
    // and lock hand-offs between them (about 40% more CPU per message, docs/benchmarks.md).
    unsigned threads = 1;
    bool json = false;
    std::string json_out;  // append the JSON result to this file as well
    std::string label;
    bool quiet = false;
};

struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Parses argv; throws usage_error. Returns false when --help was asked (usage printed).
bool parse_options(int argc, char** argv, options& out);

std::string usage_text();

// Duration mode's default for --messages: room for the seqs of the longest plausible run.
inline constexpr std::size_t duration_capacity = 50'000'000;

}  // namespace queen::bench
