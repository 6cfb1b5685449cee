#include "stream_report.hpp"

#include "report_sections.hpp"

#include <fmt/format.h>

namespace queen::bench {

using nlohmann::json;

namespace {

double seconds_between(steady::time_point a, steady::time_point b) {
    return b > a ? std::chrono::duration<double>(b - a).count() : 0;
}

std::string duration_text(const options& o) {
    if (o.duration_seconds == 0) return "off";
    return fmt::format("{}s (intervals {}s, drain <={}s)", o.duration_seconds, o.interval_seconds, o.drain_seconds);
}

json stream_conditions(const options& o, const stream_setup& s) {
    return json{{"mode", to_string(o.mode)},
                {"url", o.url},
                {"queue", s.source},
                {"sink", s.sink},
                {"query", s.query},
                {"consumerGroup", s.group},
                {"messages", o.messages},
                {"partitions", o.partitions},
                {"connections", o.connections},
                {"producers", o.producers},
                {"consumers", o.consumers},
                {"pushBatch", o.push_batch},
                {"popBatch", o.pop_batch},
                {"popPartitions", o.pop_partitions},
                {"keys", o.stream_keys},
                {"windowMs", o.window_ms},
                {"latenessMs", o.lateness_ms},
                {"wait", o.wait},
                {"waitTimeoutMs", o.wait_timeout_ms},
                {"idleSleepMs", o.idle_sleep_ms},
                {"groups", 0},
                {"acks", "in the cycle"},
                {"durationSeconds", o.duration_seconds ? json(o.duration_seconds) : json(nullptr)},
                {"intervalSeconds", o.duration_seconds ? json(o.interval_seconds) : json(nullptr)},
                {"drainSeconds", o.duration_seconds ? json(o.drain_seconds) : json(nullptr)},
                {"clientThreads", o.threads},
                {"maxSeconds", o.max_seconds},
                {"stallSeconds", o.stall_seconds}};
}

json totals_json(const state_totals& t) {
    if (!t.read) return json{{"read", false}, {"error", t.error}};
    return json{{"read", true},   {"partitions", t.partitions}, {"lanesWithState", t.lanes_with_state},
                {"rows", t.rows}, {"windows", t.windows},       {"counts", t.counts}};
}

// "Invalid or expired lease x2; …": the failed cycles by error.
std::string failures_text(const std::map<std::string, std::uint64_t>& failures) {
    std::string out;
    for (const auto& [error, n] : failures) out += fmt::format("{}{} x{}", out.empty() ? "" : "; ", error, n);
    return out;
}

}  // namespace

std::string stream_condition_line(const options& o, const stream_setup& s) {
    return fmt::format(
        "mode=stream messages={} partitions={} connections={} (producers={} consumers={}) push-batch={} pop-batch={} "
        "pop-partitions={} keys={} window={}ms lateness={}ms wait={} duration={} queue={} sink={} group={} url={} "
        "client-threads={}",
        o.messages, o.partitions, o.connections, o.producers, o.consumers, o.push_batch, o.pop_batch, o.pop_partitions,
        o.stream_keys, o.window_ms, o.lateness_ms,
        o.wait ? fmt::format("on({}ms)", o.wait_timeout_ms) : std::string("off"), duration_text(o), s.source, s.sink,
        s.group, o.url, o.threads);
}

result build_stream_result(const options& o, stream_report_facts& f) {
    result r;
    json& j = r.json;
    auto& p = f.produced;
    auto& w = f.worked;
    std::vector<std::string> failures;
    j["label"] = o.label;
    j["conditionLine"] = stream_condition_line(o, f.setup);
    j["conditions"] = stream_conditions(o, f.setup);
    j["elapsedSeconds"] = seconds_between(f.start, f.end);

    // ---- throughput
    json tp = json::object();
    const double accepted = static_cast<double>(p.queued + p.buffered);
    tp["push"] = rate_per_second(accepted, p.span.seconds());
    tp["pushSeconds"] = p.span.seconds();
    double consume_seconds = 0;
    if (w.span.first) {
        const auto end = f.consumed_all_at ? *f.consumed_all_at : (w.span.last ? *w.span.last : f.end);
        consume_seconds = seconds_between(*w.span.first, end);
    }
    tp["consume"] = rate_per_second(static_cast<double>(f.completed), consume_seconds);
    tp["consumeSeconds"] = consume_seconds;
    tp["cycles"] = rate_per_second(static_cast<double>(w.cycles), consume_seconds);
    const auto e2e_end = f.consumed_all_at ? *f.consumed_all_at : f.end;
    tp["endToEnd"] = rate_per_second(static_cast<double>(f.completed), seconds_between(f.start, e2e_end));
    tp["endToEndSeconds"] = seconds_between(f.start, e2e_end);
    tp["messagesPerCycle"] = w.cycles ? static_cast<double>(w.committed) / static_cast<double>(w.cycles) : 0.0;
    j["throughput"] = tp;

    // ---- the producers
    const std::uint64_t settled = p.queued + p.buffered + p.duplicate_after_retry;
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
    if (p.duplicate_answers)
        failures.push_back(fmt::format("{} fresh messages answered duplicate", p.duplicate_answers));
    if (p.bad_answers) failures.push_back(fmt::format("{} bad push answers", p.bad_answers));
    if (p.offset_regressions)
        failures.push_back(fmt::format("{} push offsets not increasing per partition", p.offset_regressions));

    // ---- the stream
    const bool done = f.reason == stop_reason::done;
    const auto state_delta = static_cast<std::int64_t>(f.after.counts) - static_cast<std::int64_t>(f.before.counts);
    const bool balanced =
        f.before.read && f.after.read &&
        static_cast<std::int64_t>(w.counted) == static_cast<std::int64_t>(w.counts_emitted) + state_delta;
    json by_error = json::object();
    for (const auto& [error, n] : w.failures) by_error[error] = n;
    const json lag =
        f.overview.is_object() && f.overview.contains("sourceLag") ? f.overview["sourceLag"] : json(nullptr);
    j["stream"] =
        json{{"query", f.setup.query},
             {"queryId", f.setup.query_id},
             {"source", f.setup.source},
             {"sink", f.setup.sink},
             {"consumerGroup", f.setup.group},
             {"configHash", f.setup.config_hash},
             {"pops", w.pops},
             {"emptyPops", w.empty_pops},
             {"messagesPopped", w.messages},
             {"avgMessagesPerPop", w.pops ? static_cast<double>(w.messages) / static_cast<double>(w.pops) : 0.0},
             {"laneBatches", w.lane_batches},
             {"stateGets", w.state_gets},
             {"stateRowsRead", w.state_rows_read},
             {"cycles", w.cycles},
             {"failedCycles", w.failed_cycles},
             {"cycleFailures", by_error},
             {"resentCycles", w.resent_cycles},
             {"lostAnswers", w.lost_answers},
             {"leaseReleases", w.lease_releases},
             {"releaseFailures", w.release_failures},
             {"stateOps", json{{"upserts", w.upserts}, {"deletes", w.deletes}}},
             {"windowsEmitted", w.windows_emitted},
             {"countsEmitted", w.counts_emitted},
             {"sinkPushes", json{{"queued", w.sink_queued}, {"duplicate", w.sink_duplicates}, {"other", w.sink_other}}},
             {"messagesCommitted", w.committed},
             {"malformed", w.malformed},
             {"failedRequests", w.failed_requests},
             {"retries", w.retries},
             {"bytesReceived", w.bytes_received},
             {"stateBefore", totals_json(f.before)},
             {"stateAfter", totals_json(f.after)},
             {"countCheck", json{{"counted", w.counted},
                                 {"emitted", w.counts_emitted},
                                 {"stateBefore", f.before.counts},
                                 {"stateAfter", f.after.counts},
                                 {"checked", done && f.after.read},
                                 {"balanced", balanced}}},
             {"sourceLagAtEnd", lag},
             {"overview", f.overview}};
    if (w.failed_cycles)
        failures.push_back(
            fmt::format("{} cycles answered success:false: {}", w.failed_cycles, failures_text(w.failures)));
    if (w.lost_answers)
        failures.push_back(fmt::format(
            "{} resent cycles failed after a lost answer (the first attempt may have committed)", w.lost_answers));
    if (w.malformed) failures.push_back(fmt::format("{} popped payloads are not stream events", w.malformed));
    if (w.sink_duplicates)
        failures.push_back(fmt::format("{} sink pushes of first attempts answered duplicate", w.sink_duplicates));
    if (w.sink_other) failures.push_back(fmt::format("{} sink pushes neither queued nor duplicate", w.sink_other));
    if (!f.after.read)
        failures.push_back("the state could not be read at the end: " + f.after.error);
    else if (done && !balanced)
        failures.push_back(
            fmt::format("the counts do not balance: counted {}, but emitted {} + state after {} - state before {} = {}",
                        w.counted, w.counts_emitted, f.after.counts, f.before.counts,
                        static_cast<std::int64_t>(w.counts_emitted) + state_delta));
    if (done && lag.is_null())
        failures.push_back("the query is missing from GET /api/v1/resources/streams");
    else if (done && lag.is_number() && lag.get<double>() != 0)
        failures.push_back(fmt::format("the source lag of {} at the end is {}", f.setup.group, lag.dump()));

    // ---- latencies, verification, conditions of the machine
    j["latencyMs"] = json{{"push", latency_json(p.push)},          {"pop", latency_json(w.pop)},
                          {"popEmpty", latency_json(w.pop_empty)}, {"stateGet", latency_json(w.state_get)},
                          {"cycle", latency_json(w.cycle)},        {"endToEnd", latency_json(w.e2e)}};
    j["verification"] = verdict_json(f.check);
    j["verification"]["committedTwice"] = f.check.duplicates;
    j["verification"]["notCommitted"] = f.check.missing;
    if (f.check.duplicates) failures.push_back(fmt::format("{} messages committed twice", f.check.duplicates));
    if (f.check.missing) failures.push_back(fmt::format("{} messages not committed", f.check.missing));
    if (f.check.unexpected) failures.push_back(fmt::format("{} unexpected messages", f.check.unexpected));
    if (f.check.order_violations()) failures.push_back(fmt::format("{} order violations", f.check.order_violations()));
    if (!f.duration.is_null()) j["duration"] = f.duration;
    j["reconnects"] = f.reconnects;
    j["loadAverageBefore"] = f.load_before;
    j["loadAverageAfter"] = f.load_after;
    j["clientCpuSeconds"] = f.client_cpu_seconds;
    j["clientCpuUsPerMessage"] = f.completed ? f.client_cpu_seconds * 1e6 / static_cast<double>(f.completed) : 0.0;

    if (f.reason == stop_reason::fatal) failures.insert(failures.begin(), "stopped on an error: " + f.fatal_detail);
    if (f.reason == stop_reason::time_limit)
        failures.insert(failures.begin(), fmt::format("time limit of {} s reached", o.max_seconds));
    if (f.reason == stop_reason::stalled)
        failures.insert(failures.begin(),
                        fmt::format("stalled: the cycles committed no message for {} s", o.stall_seconds));
    j["failures"] = failures;
    if (f.reason == stop_reason::time_limit || f.reason == stop_reason::stalled)
        r.exit_code = 3;
    else if (!failures.empty())
        r.exit_code = 1;
    j["result"] = r.exit_code == 0                      ? "ok"
                  : f.reason == stop_reason::stalled    ? "stalled"
                  : f.reason == stop_reason::time_limit ? "time limit"
                                                        : "failed";
    return r;
}

namespace {

std::string lat_row(const json& lat, const char* key, const char* name) {
    const auto& l = lat[key];
    if (l["count"].get<std::uint64_t>() == 0) return fmt::format("  {:<30}{:>9}\n", name, 0);
    return fmt::format("  {:<30}{:>9}{:>10.2f}{:>10.2f}{:>10.2f}{:>10.2f}{:>10.2f}\n", name,
                       l["count"].get<std::uint64_t>(), l["p50"].get<double>(), l["p90"].get<double>(),
                       l["p99"].get<double>(), l["max"].get<double>(), l["mean"].get<double>());
}

std::string totals_text(const json& t) {
    if (!t["read"].get<bool>()) return "not read: " + t["error"].get<std::string>();
    return fmt::format("{} keys, {} open windows holding {} counts, in {} lanes of {} partitions",
                       t["rows"].get<std::uint64_t>(), t["windows"].get<std::uint64_t>(),
                       t["counts"].get<std::uint64_t>(), t["lanesWithState"].get<std::uint64_t>(),
                       t["partitions"].get<std::uint64_t>());
}

}  // namespace

std::string render_stream_table(const result& r) {
    const json& j = r.json;
    const json& tp = j["throughput"];
    const json& s = j["stream"];
    std::string out;
    out += fmt::format("queen_bench{}\n",
                       j["label"].get<std::string>().empty() ? "" : "  [" + j["label"].get<std::string>() + "]");
    out += fmt::format("conditions: {}\n", j["conditionLine"].get<std::string>());
    out += fmt::format(
        "elapsed: {:.2f} s; client CPU {:.2f} s ({:.1f} µs per committed message); load average before: {}, after: "
        "{}\n\n",
        j["elapsedSeconds"].get<double>(), j["clientCpuSeconds"].get<double>(),
        j["clientCpuUsPerMessage"].get<double>(), j["loadAverageBefore"].get<std::string>(),
        j["loadAverageAfter"].get<std::string>());
    out += "throughput                         per s   over (s)\n";
    out += fmt::format("  {:<30}{:>10.0f}{:>10.2f}\n", "push (messages)", tp["push"].get<double>(),
                       tp["pushSeconds"].get<double>());
    out += fmt::format("  {:<30}{:>10.0f}{:>10.2f}\n", "cycles committed", tp["cycles"].get<double>(),
                       tp["consumeSeconds"].get<double>());
    out += fmt::format("  {:<30}{:>10.0f}{:>10.2f}\n", "messages committed", tp["consume"].get<double>(),
                       tp["consumeSeconds"].get<double>());
    out += fmt::format("  {:<30}{:>10.0f}{:>10.2f}\n", "end-to-end (messages)", tp["endToEnd"].get<double>(),
                       tp["endToEndSeconds"].get<double>());
    out += fmt::format("  {:.2f} messages per cycle\n", tp["messagesPerCycle"].get<double>());
    const json& lat = j["latencyMs"];
    out += "\nlatency (ms)                       count       p50       p90       p99       max      mean\n";
    out += lat_row(lat, "push", "push request");
    out += lat_row(lat, "pop", "pop request (200)");
    out += lat_row(lat, "popEmpty", "pop request (204)");
    out += lat_row(lat, "stateGet", "state/get");
    out += lat_row(lat, "cycle", "cycle");
    out += lat_row(lat, "endToEnd", "message, pushed -> committed");
    out += '\n';
    const json& p = j["push"];
    out += fmt::format(
        "push: {} requests, {} queued, {} buffered, {} duplicate answers ({} after retries), {} bad answers, "
        "{} offset regressions, {} not accepted, {} failed requests\n",
        p["requests"].get<std::uint64_t>(), p["queued"].get<std::uint64_t>(), p["buffered"].get<std::uint64_t>(),
        p["duplicateAnswers"].get<std::uint64_t>(), p["duplicateAfterRetry"].get<std::uint64_t>(),
        p["badAnswers"].get<std::uint64_t>(), p["offsetRegressions"].get<std::uint64_t>(),
        p["notAccepted"].get<std::uint64_t>(), p["failedRequests"].get<std::uint64_t>());
    out += fmt::format(
        "stream: query {} ({}), {} -> {}; {} pops with messages ({:.1f} msgs/pop), {} empty pops; {} lane batches, "
        "{} state/gets ({} rows read), {} cycles committed, {} failed, {} resent, {} lost answers; state ops {} "
        "upserts, {} deletes; {} windows emitted holding {} counts; sink pushes {} queued, {} duplicate, {} other; "
        "{} malformed payloads, {} failed requests\n",
        s["query"].get<std::string>(), s["queryId"].get<std::string>(), s["source"].get<std::string>(),
        s["sink"].get<std::string>(), s["pops"].get<std::uint64_t>(), s["avgMessagesPerPop"].get<double>(),
        s["emptyPops"].get<std::uint64_t>(), s["laneBatches"].get<std::uint64_t>(), s["stateGets"].get<std::uint64_t>(),
        s["stateRowsRead"].get<std::uint64_t>(), s["cycles"].get<std::uint64_t>(),
        s["failedCycles"].get<std::uint64_t>(), s["resentCycles"].get<std::uint64_t>(),
        s["lostAnswers"].get<std::uint64_t>(), s["stateOps"]["upserts"].get<std::uint64_t>(),
        s["stateOps"]["deletes"].get<std::uint64_t>(), s["windowsEmitted"].get<std::uint64_t>(),
        s["countsEmitted"].get<std::uint64_t>(), s["sinkPushes"]["queued"].get<std::uint64_t>(),
        s["sinkPushes"]["duplicate"].get<std::uint64_t>(), s["sinkPushes"]["other"].get<std::uint64_t>(),
        s["malformed"].get<std::uint64_t>(), s["failedRequests"].get<std::uint64_t>());
    for (const auto& [error, n] : s["cycleFailures"].items())
        out += fmt::format("  failed cycles: {} x{}\n", error, n.get<std::uint64_t>());
    out += fmt::format("state before: {}\nstate after:  {}\n", totals_text(s["stateBefore"]),
                       totals_text(s["stateAfter"]));
    const json& cc = s["countCheck"];
    out += fmt::format("count check: counted {} = emitted {} + state after {} - state before {}: {}\n",
                       cc["counted"].get<std::uint64_t>(), cc["emitted"].get<std::uint64_t>(),
                       cc["stateAfter"].get<std::uint64_t>(), cc["stateBefore"].get<std::uint64_t>(),
                       !cc["checked"].get<bool>()   ? "not checked (the run did not finish)"
                       : cc["balanced"].get<bool>() ? "balanced"
                                                    : "NOT balanced");
    out += fmt::format("source lag of {} at the end (GET /api/v1/resources/streams): {}\n",
                       s["consumerGroup"].get<std::string>(), s["sourceLagAtEnd"].dump());
    if (j.contains("duration")) {
        const json& d = j["duration"];
        const json& c = d["consumePerSecond"];
        out += fmt::format(
            "duration: {} s in intervals of {} s, {} messages sent; committed per interval {}; drain after the "
            "deadline {}\n",
            d["durationSeconds"].get<unsigned>(), d["intervalSeconds"].get<unsigned>(),
            d["messagesSent"].get<std::uint64_t>(),
            c.is_null() ? std::string("(no full interval)")
                        : fmt::format("median {:.0f}/s, min {:.0f}/s, max {:.0f}/s", c["median"].get<double>(),
                                      c["min"].get<double>(), c["max"].get<double>()),
            d["drainSeconds"].is_null() ? std::string("did not finish")
                                        : fmt::format("{:.2f} s", d["drainSeconds"].get<double>()));
    }
    const json& v = j["verification"];
    out += fmt::format(
        "verification (messages of committed cycles): expected {}, committed {}, unique {}, committed twice {}, not "
        "committed {}, order violations {} (offset {}, per-producer FIFO {}), unexpected {}, partitions {}\n",
        v["expected"].get<std::uint64_t>(), v["deliveries"].get<std::uint64_t>(), v["unique"].get<std::uint64_t>(),
        v["duplicates"].get<std::uint64_t>(), v["missing"].get<std::uint64_t>(),
        v["orderViolations"].get<std::uint64_t>(), v["offsetOrderViolations"].get<std::uint64_t>(),
        v["fifoViolations"].get<std::uint64_t>(), v["unexpected"].get<std::uint64_t>(),
        v["partitionsSeen"].get<std::uint64_t>());
    out += fmt::format("result: {}\n", j["result"].get<std::string>());
    for (const auto& f : j["failures"]) out += fmt::format("  - {}\n", f.get<std::string>());
    return out;
}

}  // namespace queen::bench
