#include "report.hpp"

#include <fmt/format.h>


namespace queen::bench {

using nlohmann::json;

namespace {

json latency_json(latency_recorder& r) {
    auto s = r.summarize();
    return json{{"count", s.count}, {"mean", s.mean_ms}, {"p50", s.p50_ms},
                {"p90", s.p90_ms},  {"p99", s.p99_ms},   {"max", s.max_ms}};
}

double rate(double n, double seconds) { return seconds > 0 ? n / seconds : 0; }

double seconds_between(steady::time_point a, steady::time_point b) {
    return b > a ? std::chrono::duration<double>(b - a).count() : 0;
}

}  // namespace

result build_result(const options& o, producer_stats& p, consumer_stats& c, const std::optional<verdict>& v,
                    const run_facts& f) {
    result r;
    json& j = r.json;
    j["label"] = o.label;
    j["conditionLine"] = condition_line(o);
    j["conditions"] = json{{"mode", to_string(o.mode)},
                           {"url", o.url},
                           {"queue", o.queue},
                           {"messages", o.messages},
                           {"partitions", o.partitions},
                           {"connections", o.connections},
                           {"producers", o.producers},
                           {"consumers", o.consumers},
                           {"pushBatch", o.push_batch},
                           {"popBatch", o.pop_batch},
                           {"popPartitions", o.pop_partitions},
                           {"payloadBytes", o.payload_bytes},
                           {"acks", o.auto_ack ? "auto" : "explicit"},
                           {"dedup", o.dedup},
                           {"wait", o.wait},
                           {"waitTimeoutMs", o.wait_timeout_ms},
                           {"idleSleepMs", o.idle_sleep_ms},
                           {"consumerGroup", o.consumer_group.empty() ? json(nullptr) : json(o.consumer_group)},
                           {"clientThreads", o.threads},
                           {"maxSeconds", o.max_seconds},
                           {"stallSeconds", o.stall_seconds}};

    const double elapsed = seconds_between(f.start, f.end);
    j["elapsedSeconds"] = elapsed;

    json tp = json::object();
    std::vector<std::string> failures;
    const bool producing = o.mode != run_mode::consume;
    const bool consuming = o.mode != run_mode::push;
    if (producing) {
        const double accepted = static_cast<double>(p.queued + p.buffered);
        tp["push"] = rate(accepted, p.span.seconds());
        tp["pushSeconds"] = p.span.seconds();
        std::uint64_t settled = p.queued + p.buffered + p.duplicate_after_retry;
        j["push"] = json{{"requests", p.requests},
                         {"queued", p.queued},
                         {"buffered", p.buffered},
                         {"duplicateAnswers", p.duplicate_answers},
                         {"duplicateAfterRetry", p.duplicate_after_retry},
                         {"badAnswers", p.bad_answers},
                         {"offsetRegressions", p.offset_regressions},
                         {"notAccepted", o.messages > settled ? o.messages - settled : 0},
                         {"failedRequests", p.failed_requests},
                         {"retries", p.retries},
                         {"bytesSent", p.bytes_sent}};
        if (settled < o.messages) failures.push_back(fmt::format("{} messages not accepted by push", o.messages - settled));
        if (p.duplicate_answers) failures.push_back(fmt::format("{} fresh messages answered duplicate", p.duplicate_answers));
        if (p.bad_answers) failures.push_back(fmt::format("{} bad push answers", p.bad_answers));
        if (p.offset_regressions)
            failures.push_back(fmt::format("{} push offsets not increasing per partition", p.offset_regressions));
    }
    if (consuming) {
        double consume_end = 0;
        if (c.span.first) {
            auto end = f.consumed_all_at ? *f.consumed_all_at : (c.span.last ? *c.span.last : f.end);
            consume_end = seconds_between(*c.span.first, end);
        }
        tp["consume"] = rate(static_cast<double>(f.completed), consume_end);
        tp["consumeSeconds"] = consume_end;
        j["consume"] = json{{"pops", c.pops},
                            {"emptyPops", c.empty_pops},
                            {"messagesPopped", c.messages},
                            {"avgMessagesPerPop", c.pops ? static_cast<double>(c.messages) / static_cast<double>(c.pops) : 0.0},
                            {"ackRequests", c.ack_requests},
                            {"ackFailures", c.ack_failures},
                            {"ackNoops", c.ack_noops},
                            {"failedRequests", c.failed_requests},
                            {"retries", c.retries},
                            {"bytesReceived", c.bytes_received}};
        if (c.ack_failures) failures.push_back(fmt::format("{} acks not successful", c.ack_failures));
    }
    if (producing && consuming) {
        auto end = f.consumed_all_at ? *f.consumed_all_at : f.end;
        tp["endToEnd"] = rate(static_cast<double>(f.completed), seconds_between(f.start, end));
        tp["endToEndSeconds"] = seconds_between(f.start, end);
    } else if (consuming) {
        tp["endToEnd"] = tp["consume"];
        tp["endToEndSeconds"] = tp["consumeSeconds"];
    }
    j["throughput"] = tp;

    json lat = json::object();
    if (producing) lat["push"] = latency_json(p.push);
    if (consuming) {
        lat["pop"] = latency_json(c.pop);
        lat["popEmpty"] = latency_json(c.pop_empty);
        if (!o.auto_ack) lat["ack"] = latency_json(c.ack);
        lat["endToEnd"] = latency_json(c.e2e);
    }
    j["latencyMs"] = lat;

    if (v) {
        j["verification"] = json{{"expected", v->expected},
                                 {"deliveries", v->deliveries},
                                 {"unique", v->unique},
                                 {"duplicates", v->duplicates},
                                 {"missing", v->missing},
                                 {"unexpected", v->unexpected},
                                 {"orderViolations", v->order_violations()},
                                 {"offsetOrderViolations", v->offset_order_violations},
                                 {"fifoViolations", v->fifo_violations},
                                 {"partitionsSeen", v->partitions_seen}};
        if (v->duplicates) failures.push_back(fmt::format("{} duplicate deliveries", v->duplicates));
        if (v->missing) failures.push_back(fmt::format("{} messages missing", v->missing));
        if (v->unexpected) failures.push_back(fmt::format("{} unexpected messages", v->unexpected));
        if (v->order_violations()) failures.push_back(fmt::format("{} order violations", v->order_violations()));
    }
    j["reconnects"] = f.reconnects;
    j["loadAverageBefore"] = f.load_before;
    j["loadAverageAfter"] = f.load_after;
    j["clientCpuSeconds"] = f.client_cpu_seconds;
    if (f.reason == stop_reason::fatal) failures.insert(failures.begin(), "stopped on an error: " + f.fatal_detail);
    if (f.reason == stop_reason::time_limit)
        failures.insert(failures.begin(), fmt::format("time limit of {} s reached", o.max_seconds));
    if (f.reason == stop_reason::stalled)
        failures.insert(failures.begin(),
                        fmt::format("stalled: the consumers settled no message for {} s", o.stall_seconds));
    j["failures"] = failures;
    if (f.reason == stop_reason::time_limit || f.reason == stop_reason::stalled) r.exit_code = 3;
    else if (!failures.empty()) r.exit_code = 1;
    j["result"] = r.exit_code == 0                         ? "ok"
                  : f.reason == stop_reason::stalled       ? "stalled"
                  : f.reason == stop_reason::time_limit    ? "time limit"
                                                           : "failed";
    return r;
}

namespace {

std::string lat_row(const json& lat, const char* key, const char* name) {
    if (!lat.contains(key)) return {};
    const auto& l = lat[key];
    if (l["count"].get<std::uint64_t>() == 0) return fmt::format("  {:<22}{:>9}\n", name, 0);
    return fmt::format("  {:<22}{:>9}{:>10.2f}{:>10.2f}{:>10.2f}{:>10.2f}{:>10.2f}\n", name, l["count"].get<std::uint64_t>(),
                       l["p50"].get<double>(), l["p90"].get<double>(), l["p99"].get<double>(), l["max"].get<double>(),
                       l["mean"].get<double>());
}

}  // namespace

std::string render_table(const result& r) {
    const json& j = r.json;
    std::string out;
    out += fmt::format("queen_bench{}\n", j["label"].get<std::string>().empty() ? "" : "  [" + j["label"].get<std::string>() + "]");
    out += fmt::format("conditions: {}\n", j["conditionLine"].get<std::string>());
    out += fmt::format("elapsed: {:.2f} s; client CPU {:.2f} s; load average before: {}, after: {}\n\n",
                       j["elapsedSeconds"].get<double>(), j["clientCpuSeconds"].get<double>(),
                       j["loadAverageBefore"].get<std::string>(), j["loadAverageAfter"].get<std::string>());
    const auto& tp = j["throughput"];
    out += "throughput                 msgs/s   over (s)\n";
    auto tp_row = [&](const char* key, const char* secs, const char* name) {
        if (tp.contains(key))
            out += fmt::format("  {:<22}{:>10.0f}{:>10.2f}\n", name, tp[key].get<double>(), tp[secs].get<double>());
    };
    tp_row("push", "pushSeconds", "push");
    tp_row("consume", "consumeSeconds",
           j["conditions"]["acks"].get<std::string>() == "auto" ? "consume (autoAck pop)" : "consume (pop+ack)");
    tp_row("endToEnd", "endToEndSeconds", "end-to-end");
    const auto& lat = j["latencyMs"];
    out += "\nlatency (ms)               count       p50       p90       p99       max      mean\n";
    out += lat_row(lat, "push", "push request");
    out += lat_row(lat, "pop", "pop request (200)");
    out += lat_row(lat, "popEmpty", "pop request (204)");
    out += lat_row(lat, "ack", "ack request");
    out += lat_row(lat, "endToEnd", "end-to-end message");
    out += '\n';
    if (j.contains("push")) {
        const auto& p = j["push"];
        out += fmt::format(
            "push: {} requests, {} queued, {} buffered, {} duplicate answers ({} after retries), {} bad answers, "
            "{} offset regressions, {} not accepted, {} failed requests\n",
            p["requests"].get<std::uint64_t>(), p["queued"].get<std::uint64_t>(), p["buffered"].get<std::uint64_t>(),
            p["duplicateAnswers"].get<std::uint64_t>(), p["duplicateAfterRetry"].get<std::uint64_t>(),
            p["badAnswers"].get<std::uint64_t>(), p["offsetRegressions"].get<std::uint64_t>(),
            p["notAccepted"].get<std::uint64_t>(), p["failedRequests"].get<std::uint64_t>());
    }
    if (j.contains("consume")) {
        const auto& c = j["consume"];
        out += fmt::format(
            "consume: {} pops with messages ({:.1f} msgs/pop), {} empty pops, {} ack requests, {} acks failed, "
            "{} failed requests\n",
            c["pops"].get<std::uint64_t>(), c["avgMessagesPerPop"].get<double>(), c["emptyPops"].get<std::uint64_t>(),
            c["ackRequests"].get<std::uint64_t>(), c["ackFailures"].get<std::uint64_t>(),
            c["failedRequests"].get<std::uint64_t>());
    }
    if (j.contains("verification")) {
        const auto& v = j["verification"];
        out += fmt::format(
            "verification: expected {}, delivered {}, unique {}, duplicates {}, missing {}, order violations {} "
            "(offset {}, per-producer FIFO {}), unexpected {}, partitions {}\n",
            v["expected"].get<std::uint64_t>(), v["deliveries"].get<std::uint64_t>(), v["unique"].get<std::uint64_t>(),
            v["duplicates"].get<std::uint64_t>(), v["missing"].get<std::uint64_t>(),
            v["orderViolations"].get<std::uint64_t>(), v["offsetOrderViolations"].get<std::uint64_t>(),
            v["fifoViolations"].get<std::uint64_t>(), v["unexpected"].get<std::uint64_t>(),
            v["partitionsSeen"].get<std::uint64_t>());
    }
    out += fmt::format("result: {}\n", j["result"].get<std::string>());
    for (const auto& f : j["failures"]) out += fmt::format("  - {}\n", f.get<std::string>());
    return out;
}

}  // namespace queen::bench
