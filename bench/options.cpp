#include "options.hpp"

#include <fmt/core.h>

#include <charconv>
#include <chrono>
#include <iostream>
#include <random>
#include <string_view>

namespace queen::bench {

const char* to_string(run_mode m) {
    switch (m) {
        case run_mode::push: return "push";
        case run_mode::consume: return "consume";
        case run_mode::both: return "both";
    }
    return "?";
}

namespace {

std::size_t parse_size(std::string_view name, const std::string& v, std::size_t min, std::size_t max) {
    std::size_t out = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc{} || ptr != v.data() + v.size() || out < min || out > max)
        throw usage_error(fmt::format("{} must be an integer in [{}, {}], got '{}'", name, min, max, v));
    return out;
}

void parse_url(options& o) {
    std::string_view u = o.url;
    constexpr std::string_view scheme = "http://";
    if (u.substr(0, scheme.size()) != scheme)
        throw usage_error(fmt::format("--url must start with http:// (got '{}')", o.url));
    u.remove_prefix(scheme.size());
    auto slash = u.find('/');
    std::string_view authority = u.substr(0, slash);
    std::string_view path = slash == std::string_view::npos ? std::string_view() : u.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    if (authority.empty()) throw usage_error("--url has no host");
    std::string_view host = authority, port = "80";
    if (authority.front() == '[') {  // [v6]:port
        auto close = authority.find(']');
        if (close == std::string_view::npos) throw usage_error("--url: unbalanced '['");
        host = authority.substr(1, close - 1);
        if (close + 1 < authority.size()) {
            if (authority[close + 1] != ':') throw usage_error("--url: bad port");
            port = authority.substr(close + 2);
        }
    } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    parse_size("--url port", std::string(port), 1, 65535);
    o.host = std::string(host);
    o.port = std::string(port);
    o.base_path = std::string(path);
}

std::string fresh_queue_name() {
    std::random_device rd;
    auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
    return fmt::format("bench-{}-{:06x}", now.count(), rd() & 0xffffff);
}

}  // namespace

std::string usage_text() {
    return R"(queen_bench: load generator for the queen broker (push, pop, ack over HTTP/1.1)

Usage: queen_bench [options]
  --url URL              broker base URL (default http://127.0.0.1:6632)
  --mode push|consume|both
                         push: produce only; consume: pop+ack an existing backlog of
                         --messages messages; both: produce and consume concurrently (default)
  --messages N           messages to push / consume (default 100000)
  --partitions P         partitions p0..p{P-1} the producers spread over (default 100)
  --connections C        keep-alive HTTP connections (default 16); in `both` mode split
                         half producers, half consumers
  --producers N          producer connections (overrides the split)
  --consumers N          consumer connections (overrides the split)
  --push-batch B         items per push request (default 100)
  --pop-batch B          batch per pop request (default 100)
  --pop-partitions K     `partitions` parameter of the queue-wide pop (default 1)
  --payload-bytes N      size of each message's JSON payload (default 200)
  --queue NAME           queue name (default: a fresh unique name per run)
  --consumer-group NAME  consume as this group (default: queue mode)
  --wait                 long-poll pops (wait=true)
  --wait-timeout-ms MS   long-poll timeout (default 2000)
  --idle-sleep-ms MS     pause after an empty pop without --wait (default 10)
  --auto-ack             pop with autoAck=true, no ack requests
  --explicit-ack         ack each message with POST /api/v1/ack/batch (default)
  --dedup                client-chosen transactionIds (always on; accepted for clarity)
  --max-seconds S        overall time limit; on expiry report and exit 3 (default 600)
  --stall-seconds S      stop (report, exit 3) when the consumers settle no message for
                         S seconds, e.g. a partition that is never handed out (default 60;
                         0 waits for --max-seconds)
  --request-timeout S    per-request timeout (default 60, plus the long-poll timeout)
  --threads N            client I/O threads (default 2)
  --label TEXT           free text copied into the report
  --json                 print the result as one JSON object instead of the table
  --json-out FILE        also append the JSON result (one line) to FILE
  --quiet                no progress lines on stderr
Exit status: 0 all good; 1 messages lost, duplicated or out of order, or request errors;
2 bad options or broker unreachable; 3 time limit reached or consumption stalled.
)";
}

bool parse_options(int argc, char** argv, options& o) {
    bool producers_given = false, consumers_given = false;
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
        } else if (arg == "--url") o.url = next();
        else if (arg == "--messages") o.messages = parse_size(arg, next(), 1, 1u << 31);
        else if (arg == "--partitions") o.partitions = parse_size(arg, next(), 1, 1000000);
        else if (arg == "--connections") o.connections = parse_size(arg, next(), 1, 10000);
        else if (arg == "--producers") o.producers = parse_size(arg, next(), 0, 10000), producers_given = true;
        else if (arg == "--consumers") o.consumers = parse_size(arg, next(), 0, 10000), consumers_given = true;
        else if (arg == "--push-batch") o.push_batch = parse_size(arg, next(), 1, 1000000);
        else if (arg == "--pop-batch") o.pop_batch = parse_size(arg, next(), 1, 1000000);
        else if (arg == "--pop-partitions") o.pop_partitions = parse_size(arg, next(), 1, 1000000);
        else if (arg == "--payload-bytes") o.payload_bytes = parse_size(arg, next(), 0, 64u << 20);
        else if (arg == "--queue") o.queue = next(), o.queue_given = true;
        else if (arg == "--consumer-group") o.consumer_group = next();
        else if (arg == "--mode") {
            auto m = next();
            if (m == "push") o.mode = run_mode::push;
            else if (m == "consume") o.mode = run_mode::consume;
            else if (m == "both") o.mode = run_mode::both;
            else throw usage_error(fmt::format("--mode must be push, consume or both, got '{}'", m));
        } else if (arg == "--wait") flag(), o.wait = true;
        else if (arg == "--wait-timeout-ms") o.wait_timeout_ms = static_cast<unsigned>(parse_size(arg, next(), 1, 600000));
        else if (arg == "--idle-sleep-ms") o.idle_sleep_ms = static_cast<unsigned>(parse_size(arg, next(), 0, 60000));
        else if (arg == "--auto-ack") flag(), o.auto_ack = true;
        else if (arg == "--explicit-ack") flag(), o.auto_ack = false;
        else if (arg == "--dedup") flag(), o.dedup = true;
        else if (arg == "--max-seconds") o.max_seconds = static_cast<unsigned>(parse_size(arg, next(), 1, 86400 * 7));
        else if (arg == "--stall-seconds") o.stall_seconds = static_cast<unsigned>(parse_size(arg, next(), 0, 86400 * 7));
        else if (arg == "--request-timeout") o.request_timeout_s = static_cast<unsigned>(parse_size(arg, next(), 1, 3600));
        else if (arg == "--threads") o.threads = static_cast<unsigned>(parse_size(arg, next(), 1, 64));
        else if (arg == "--label") o.label = next();
        else if (arg == "--json") flag(), o.json = true;
        else if (arg == "--json-out") o.json_out = next();
        else if (arg == "--quiet") flag(), o.quiet = true;
        else throw usage_error(fmt::format("unknown option '{}' (see --help)", arg));
    }
    parse_url(o);
    if (o.queue_given && (o.queue.empty() || o.queue.size() > 255))
        throw usage_error("--queue must be 1..255 bytes");
    if (o.mode == run_mode::consume && !o.queue_given)
        throw usage_error("--mode consume needs --queue (the queue holding the backlog)");
    if (!o.queue_given) o.queue = fresh_queue_name();

    switch (o.mode) {
        case run_mode::push:
            if (!producers_given) o.producers = o.connections;
            if (consumers_given && o.consumers) throw usage_error("--mode push runs no consumers");
            o.consumers = 0;
            break;
        case run_mode::consume:
            if (!consumers_given) o.consumers = o.connections;
            if (producers_given && o.producers) throw usage_error("--mode consume runs no producers");
            o.producers = 0;
            break;
        case run_mode::both:
            if (!producers_given && !consumers_given) {
                o.producers = o.connections / 2;
                o.consumers = o.connections - o.producers;
            } else if (!producers_given) {
                o.producers = o.connections > o.consumers ? o.connections - o.consumers : 1;
            } else if (!consumers_given) {
                o.consumers = o.connections > o.producers ? o.connections - o.producers : 1;
            }
            break;
    }
    if (o.mode != run_mode::consume && o.producers == 0) throw usage_error("at least one producer is needed");
    if (o.mode != run_mode::push && o.consumers == 0) throw usage_error("at least one consumer is needed");
    o.connections = o.producers + o.consumers;
    return true;
}

std::string condition_line(const options& o) {
    return fmt::format(
        "mode={} messages={} partitions={} connections={} (producers={} consumers={}) push-batch={} pop-batch={} "
        "pop-partitions={} payload-bytes={} acks={} dedup={} wait={} consumer-group={} queue={} url={} "
        "client-threads={}",
        to_string(o.mode), o.messages, o.partitions, o.connections, o.producers, o.consumers, o.push_batch,
        o.pop_batch, o.pop_partitions, o.payload_bytes, o.auto_ack ? "auto" : "explicit", o.dedup ? "on" : "off",
        o.wait ? fmt::format("on({}ms)", o.wait_timeout_ms) : std::string("off"),
        o.consumer_group.empty() ? std::string("(queue mode)") : o.consumer_group, o.queue, o.url, o.threads);
}

}  // namespace queen::bench
