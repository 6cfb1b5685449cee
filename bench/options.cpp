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
        case run_mode::pipeline: return "pipeline";
        case run_mode::stream: return "stream";
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

// Rejects combinations of --groups, --rate, --stages and --inject-tx-failures that cannot be run.
void validate_new_modes(const options& o, bool stages_given, bool stream_given) {
    const bool pipeline = o.mode == run_mode::pipeline;
    if (o.groups > 0) {
        if (o.mode == run_mode::push) throw usage_error("--groups needs consumers (mode consume or both)");
        if (pipeline) throw usage_error("--groups does not apply to --mode pipeline (its stages run in queue mode)");
        if (!o.consumer_group.empty()) throw usage_error("--groups and --consumer-group exclude each other");
        if (o.consumers < o.groups)
            throw usage_error(fmt::format("--groups {} needs at least {} consumers (got {})", o.groups, o.groups, o.consumers));
        if (o.queue.size() + 1 + std::to_string(o.groups - 1).size() + 1 > 255)
            throw usage_error("--queue is too long for the group names <queue>-g<i>");
    }
    if (o.rate > 0 && o.mode == run_mode::consume) throw usage_error("--rate needs producers (mode push, both or pipeline)");
    if (stages_given && !pipeline) throw usage_error("--stages applies to --mode pipeline only");
    if (stream_given && o.mode != run_mode::stream)
        throw usage_error("--stream-keys, --window-ms and --lateness-ms apply to --mode stream only");
    if (o.inject_tx_failures > 0 && !pipeline) throw usage_error("--inject-tx-failures applies to --mode pipeline only");
    if (o.inject_tx_failures == 1) throw usage_error("--inject-tx-failures 1 would fail every transaction; use 0 or >= 2");
    if (o.mode == run_mode::stream) {
        if (o.groups > 0) throw usage_error("--groups does not apply to --mode stream");
        if (o.auto_ack) throw usage_error("--auto-ack does not apply to --mode stream (its cycles ack)");
        if (!o.consumer_group.empty())
            throw usage_error("--mode stream pops as the group streams.<queue>; drop --consumer-group");
        if (o.rate > 0) throw usage_error("--rate does not apply to --mode stream");
        if (o.queue.size() + 5 > 255) throw usage_error("--queue is too long for the sink name <queue>-sink");
    }
    if (pipeline) {
        if (o.auto_ack) throw usage_error("--auto-ack does not apply to --mode pipeline (it forwards and acks atomically)");
        if (!o.consumer_group.empty()) throw usage_error("--mode pipeline runs in queue mode; drop --consumer-group");
        if (o.consumers < o.stages)
            throw usage_error(fmt::format("--mode pipeline with {} stages needs at least {} consumers (got {})", o.stages,
                                          o.stages, o.consumers));
        if (o.queue.size() + 2 + std::to_string(o.stages - 1).size() > 255)
            throw usage_error("--queue is too long for the stage names <queue>-s<k>");
    }
}

// Checks and completes --duration-seconds: mode both, one stream, --messages as room, time limit.
void resolve_duration_mode(options& o) {
    if (o.duration_seconds == 0) return;
    if (o.mode != run_mode::both && o.mode != run_mode::stream)
        throw usage_error("--duration-seconds needs --mode both or stream");
    if (o.groups > 0) throw usage_error("--duration-seconds does not combine with --groups");
    if (!o.messages_given) o.messages = duration_capacity;
    const unsigned needed = o.duration_seconds + o.drain_seconds;
    if (!o.max_seconds_given) o.max_seconds = needed;
    else if (o.max_seconds < o.duration_seconds)
        throw usage_error(fmt::format("--max-seconds {} is shorter than --duration-seconds {}", o.max_seconds,
                                      o.duration_seconds));
}

}  // namespace

bool parse_options(int argc, char** argv, options& o) {
    bool producers_given = false, consumers_given = false, stages_given = false, duration_extras = false;
    bool stream_given = false;
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
        else if (arg == "--header") {
            const std::string v = next();
            const auto colon = v.find(':');
            if (colon == std::string::npos || colon == 0)
                throw usage_error(fmt::format("--header needs NAME:VALUE, got '{}'", v));
            std::string header_value = v.substr(colon + 1);
            header_value.erase(0, header_value.find_first_not_of(' '));
            o.headers.emplace_back(v.substr(0, colon), std::move(header_value));
        }
        else if (arg == "--messages") o.messages = parse_size(arg, next(), 1, 1u << 31), o.messages_given = true;
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
        else if (arg == "--groups") o.groups = parse_size(arg, next(), 0, 10000);
        else if (arg == "--rate") o.rate = parse_size(arg, next(), 0, 100000000);
        else if (arg == "--stages") o.stages = parse_size(arg, next(), 1, 100), stages_given = true;
        else if (arg == "--inject-tx-failures") o.inject_tx_failures = parse_size(arg, next(), 0, 1000000);
        else if (arg == "--stream-keys") o.stream_keys = parse_size(arg, next(), 1, 100000), stream_given = true;
        else if (arg == "--window-ms")
            o.window_ms = static_cast<unsigned>(parse_size(arg, next(), 1, 86400000)), stream_given = true;
        else if (arg == "--lateness-ms")
            o.lateness_ms = static_cast<unsigned>(parse_size(arg, next(), 0, 86400000)), stream_given = true;
        else if (arg == "--mode") {
            auto m = next();
            if (m == "push") o.mode = run_mode::push;
            else if (m == "consume") o.mode = run_mode::consume;
            else if (m == "both") o.mode = run_mode::both;
            else if (m == "pipeline") o.mode = run_mode::pipeline;
            else if (m == "stream") o.mode = run_mode::stream;
            else throw usage_error(fmt::format("--mode must be push, consume, both, pipeline or stream, got '{}'", m));
        } else if (arg == "--wait") flag(), o.wait = true;
        else if (arg == "--wait-timeout-ms") o.wait_timeout_ms = static_cast<unsigned>(parse_size(arg, next(), 1, 600000));
        else if (arg == "--idle-sleep-ms") o.idle_sleep_ms = static_cast<unsigned>(parse_size(arg, next(), 0, 60000));
        else if (arg == "--auto-ack") flag(), o.auto_ack = true;
        else if (arg == "--explicit-ack") flag(), o.auto_ack = false;
        else if (arg == "--dedup") flag(), o.dedup = true;
        else if (arg == "--max-seconds")
            o.max_seconds = static_cast<unsigned>(parse_size(arg, next(), 1, 86400 * 7)), o.max_seconds_given = true;
        else if (arg == "--duration-seconds")
            o.duration_seconds = static_cast<unsigned>(parse_size(arg, next(), 1, 86400 * 7));
        else if (arg == "--interval-seconds")
            o.interval_seconds = static_cast<unsigned>(parse_size(arg, next(), 1, 86400)), duration_extras = true;
        else if (arg == "--drain-seconds")
            o.drain_seconds = static_cast<unsigned>(parse_size(arg, next(), 1, 86400)), duration_extras = true;
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
    if (duration_extras && o.duration_seconds == 0)
        throw usage_error("--interval-seconds and --drain-seconds need --duration-seconds");
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
        case run_mode::pipeline:
        case run_mode::stream:
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
    validate_new_modes(o, stages_given, stream_given);
    resolve_duration_mode(o);
    o.connections = o.producers + o.consumers;
    return true;
}

}  // namespace queen::bench
