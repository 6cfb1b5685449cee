#include "report.hpp"

#include "conditions.hpp"
#include "report_sections.hpp"

#include <fmt/format.h>

namespace queen::bench {

using nlohmann::json;

json latency_json(latency_recorder& r) {
    auto s = r.summarize();
    return json{{"count", s.count}, {"mean", s.mean_ms}, {"p50", s.p50_ms},
                {"p90", s.p90_ms},  {"p99", s.p99_ms},   {"max", s.max_ms}};
}

double rate_per_second(double n, double seconds) { return seconds > 0 ? n / seconds : 0; }

namespace {

double rate(double n, double seconds) { return rate_per_second(n, seconds); }

double seconds_between(steady::time_point a, steady::time_point b) {
    return b > a ? std::chrono::duration<double>(b - a).count() : 0;
}

}  // namespace

result build_result(const options& o, producer_stats& p, consumer_stats& c, const std::vector<verdict>& verdicts,
                    std::vector<stage_stats>& stages, const run_facts& f) {
    result r;
    json& j = r.json;
    j["label"] = o.label;
    j["conditionLine"] = condition_line(o);
    j["conditions"] = conditions_json(o);

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
                         {"notAccepted", f.messages > settled ? f.messages - settled : 0},
                         {"failedRequests", p.failed_requests},
                         {"retries", p.retries},
                         {"bytesSent", p.bytes_sent}};
        if (settled < f.messages) failures.push_back(fmt::format("{} messages not accepted by push", f.messages - settled));
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
    if (consuming && o.groups > 0) {  // consume and endToEnd count deliveries (N x G); this counts messages
        tp["endToEndMessages"] = tp["endToEnd"].get<double>() / static_cast<double>(o.groups);
    }
    j["throughput"] = tp;
    if (producing && o.rate > 0) j["rate"] = rate_section(o, p);
    if (o.mode == run_mode::pipeline) j["pipeline"] = pipeline_section(o, stages);
    if (!f.duration.is_null()) j["duration"] = f.duration;

    json lat = json::object();
    if (producing) lat["push"] = latency_json(p.push);
    if (o.mode == run_mode::pipeline) lat["transaction"] = j["pipeline"]["transactionLatencyMs"];
    if (consuming) {
        lat["pop"] = latency_json(c.pop);
        lat["popEmpty"] = latency_json(c.pop_empty);
        if (!o.auto_ack) lat["ack"] = latency_json(c.ack);
        lat["endToEnd"] = latency_json(c.e2e);
    }
    j["latencyMs"] = lat;

    if (!verdicts.empty()) {
        verdict v;
        for (const auto& one : verdicts) v.add(one);
        j["verification"] = verdict_json(v);
        if (o.groups > 0) j["verification"]["groups"] = groups_section(o, verdicts);
        if (o.mode == run_mode::pipeline) j["verification"]["verifiedAt"] = j["pipeline"]["verifiedAt"];
        const std::string scope = o.groups > 0 ? fmt::format(" (summed over {} groups)", o.groups) : std::string();
        if (v.duplicates) failures.push_back(fmt::format("{} duplicate deliveries{}", v.duplicates, scope));
        if (v.missing) failures.push_back(fmt::format("{} messages missing{}", v.missing, scope));
        if (v.unexpected) failures.push_back(fmt::format("{} unexpected messages{}", v.unexpected, scope));
        if (v.order_violations()) failures.push_back(fmt::format("{} order violations{}", v.order_violations(), scope));
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

}  // namespace queen::bench
