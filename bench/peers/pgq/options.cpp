#include "options.hpp"

#include <fmt/core.h>

#include <charconv>
#include <chrono>
#include <iostream>
#include <random>
#include <string_view>

namespace pgq_bench {

const char* to_string(run_mode m) {
    switch (m) {
        case run_mode::produce: return "produce";
        case run_mode::consume: return "consume";
        case run_mode::both: return "both";
    }
    return "?";
}

namespace {

// The whole of `v` as an integer in [min, max], or usage_error naming the option.
std::size_t parse_size(std::string_view name, const std::string& v, std::size_t min, std::size_t max) {
    std::size_t out = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc{} || ptr != v.data() + v.size() || out < min || out > max)
        throw usage_error(fmt::format("{} must be an integer in [{}, {}], got '{}'", name, min, max, v));
    return out;
}

// The whole of `v` as a number of seconds in [min, max], or usage_error naming the option.
double parse_seconds(std::string_view name, const std::string& v, double min, double max) {
    double out = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc{} || ptr != v.data() + v.size() || !(out >= min && out <= max))
        throw usage_error(fmt::format("{} must be a number of seconds in [{}, {}], got '{}'", name, min, max, v));
    return out;
}

// "bench_<unix seconds>_<6 hex digits>": unique enough for one database.
std::string fresh_queue_name() {
    std::random_device rd;
    auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
    return fmt::format("bench_{}_{:06x}", now.count(), rd() & 0xffffff);
}

}  // namespace

std::string usage_text() {
    return R"(pgq_bench: benchmark driver for PgQ (pgq extension + pgqd ticker) on PostgreSQL

Usage: pgq_bench --conninfo STR [options]
  --conninfo STR         libpq conninfo (or URI) of the benchmark database (default: libpq
                         defaults and PG* environment variables)
  --mode produce|consume|both
                         produce: insert --messages events only (the consumer is registered,
                         so they are retained); consume: consume --messages events that a
                         produce run left in --queue; both: producers and the consumer run
                         concurrently (default)
  --queue NAME           PgQ queue (default: a fresh unique name; consume needs it)
  --consumer NAME        PgQ consumer name (default bench)
  --messages N           events to produce / consume (default 200000)
  --producers N          producer threads, one connection each (default 8)
  --batch N              events per producer transaction (default 100)
  --explicit-begin       wrap each producer statement in BEGIN … COMMIT (three round trips
                         instead of one; the transaction is the same)
  --payload-bytes N      size of each event's JSON payload (default 200)
  --setup                create the extension, the queue, its config and the consumer, then
                         exit (runs do this themselves when the queue does not exist)
  --pgqd                 start pgqd for the run and stop it afterwards (default)
  --no-pgqd              do not start pgqd (an external ticker must be running)
  --pgqd-bin PATH        pgqd executable (default pgqd, looked up in PATH)
  --ticker-period S      pgqd ticker_period (default 0.1)
  --ticker-max-lag S     queue ticker_max_lag (default 0.1)
  --ticker-max-count N   queue ticker_max_count (default 500, PgQ's default)
  --idle-sleep-ms MS     pause after next_batch returned NULL (default 10)
  --max-seconds S        overall time limit; on expiry report and exit 3 (default 600)
  --stall-seconds S      stop (report, exit 3) when the consumer finishes no event for S
                         seconds (default 60; 0 waits for --max-seconds)
  --label TEXT           free text copied into the report
  --json                 print the result as one JSON object instead of the table
  --json-out FILE        also append the JSON result (one line) to FILE
  --quiet                no progress lines on stderr
Exit status: 0 all good; 1 events lost, duplicated or out of order, or SQL errors;
2 bad options, database unreachable or pgqd not startable; 3 time limit reached or stalled.
)";
}

bool parse_options(int argc, char** argv, options& o) {
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::string value;
        bool has_inline = false;
        if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            has_inline = true;
        }
        auto next = [&]() -> std::string {
            if (has_inline) return value;
            if (i + 1 >= argc) throw usage_error(fmt::format("{} needs a value", arg));
            return argv[++i];
        };
        auto flag = [&] {
            if (has_inline) throw usage_error(fmt::format("{} takes no value", arg));
        };
        if (arg == "--help" || arg == "-h") {
            std::cout << usage_text();
            return false;
        } else if (arg == "--conninfo") o.conninfo = next();
        else if (arg == "--queue") o.queue = next(), o.queue_given = true;
        else if (arg == "--consumer") o.consumer = next();
        else if (arg == "--mode") {
            auto m = next();
            if (m == "produce") o.mode = run_mode::produce;
            else if (m == "consume") o.mode = run_mode::consume;
            else if (m == "both") o.mode = run_mode::both;
            else throw usage_error(fmt::format("--mode must be produce, consume or both, got '{}'", m));
        } else if (arg == "--messages") o.messages = parse_size(arg, next(), 1, 1u << 31);
        else if (arg == "--producers") o.producers = parse_size(arg, next(), 1, 1000);
        else if (arg == "--batch") o.batch = parse_size(arg, next(), 1, 100000);
        else if (arg == "--explicit-begin") flag(), o.explicit_begin = true;
        else if (arg == "--payload-bytes") o.payload_bytes = parse_size(arg, next(), 0, 1u << 20);
        else if (arg == "--setup") flag(), o.setup_only = true;
        else if (arg == "--pgqd") flag(), o.run_pgqd = true;
        else if (arg == "--no-pgqd") flag(), o.run_pgqd = false;
        else if (arg == "--pgqd-bin") o.pgqd_bin = next();
        else if (arg == "--ticker-period") o.ticker_period_s = parse_seconds(arg, next(), 0.001, 3600);
        else if (arg == "--ticker-max-lag") o.ticker_max_lag_s = parse_seconds(arg, next(), 0.001, 3600);
        else if (arg == "--ticker-max-count") o.ticker_max_count = parse_size(arg, next(), 1, 1u << 30);
        else if (arg == "--idle-sleep-ms") o.idle_sleep_ms = static_cast<unsigned>(parse_size(arg, next(), 0, 60000));
        else if (arg == "--max-seconds") o.max_seconds = static_cast<unsigned>(parse_size(arg, next(), 1, 86400 * 7));
        else if (arg == "--stall-seconds") o.stall_seconds = static_cast<unsigned>(parse_size(arg, next(), 0, 86400 * 7));
        else if (arg == "--label") o.label = next();
        else if (arg == "--json") flag(), o.json = true;
        else if (arg == "--json-out") o.json_out = next();
        else if (arg == "--quiet") flag(), o.quiet = true;
        else throw usage_error(fmt::format("unknown option '{}' (see --help)", arg));
    }
    if (o.queue_given && (o.queue.empty() || o.queue.size() > 200)) throw usage_error("--queue must be 1..200 bytes");
    if (o.consumer.empty()) throw usage_error("--consumer must not be empty");
    if (o.mode == run_mode::consume && !o.queue_given && !o.setup_only)
        throw usage_error("--mode consume needs --queue (the queue a produce run filled)");
    if (!o.queue_given) o.queue = fresh_queue_name();
    return true;
}

std::string condition_line(const options& o) {
    return fmt::format(
        "mode={} messages={} producers={} events/transaction={} consumers={} payload-bytes={} queue={} "
        "consumer={} ticker={} ticker-max-lag={}s ticker-max-count={} idle-sleep={}ms",
        to_string(o.mode), o.messages, o.mode == run_mode::consume ? 0 : o.producers, o.batch, o.mode == run_mode::produce ? 0 : 1, o.payload_bytes,
        o.queue, o.consumer, o.run_pgqd ? fmt::format("pgqd(period {}s)", o.ticker_period_s) : std::string("external"),
        o.ticker_max_lag_s, o.ticker_max_count, o.idle_sleep_ms);
}

}  // namespace pgq_bench
