#include "report.hpp"

#include <fmt/format.h>

#include <vector>

namespace pgq_bench {

using nlohmann::json;

namespace {

double seconds_between(steady::time_point a, steady::time_point b) {
    return b > a ? std::chrono::duration<double>(b - a).count() : 0;
}

// n / seconds, or null when nothing was measured.
json rate(double n, double seconds) { return seconds > 0 ? json(n / seconds) : json(nullptr); }

json seconds_or_null(double s) { return s > 0 ? json(s) : json(nullptr); }

}  // namespace

result build_result(const options& o, const producer_stats& p, const consumer_stats& c,
                    const std::optional<verdict>& v, const run_facts& f) {
    result r;
    json& j = r.json;
    const bool producing = o.mode != run_mode::consume;
    const bool consuming = o.mode != run_mode::produce;
    j["system"] = "pgq";
    j["label"] = o.label;
    j["mode"] = to_string(o.mode);
    j["messages"] = o.messages;
    j["conditions"] = json{{"producers", producing ? o.producers : 0},
                           {"eventsPerTransaction", o.batch},
                           {"consumers", consuming ? 1 : 0},
                           {"payloadBytes", o.payload_bytes},
                           {"tickerPeriodS", o.run_pgqd ? json(o.ticker_period_s) : json(nullptr)},
                           {"tickerMaxLagS", o.ticker_max_lag_s},
                           {"tickerMaxCount", o.ticker_max_count},
                           {"idleSleepMs", o.idle_sleep_ms},
                           {"pgqd", o.run_pgqd ? "driver" : "external"},
                           {"queue", o.queue},
                           {"consumer", o.consumer}};
    j["conditionLine"] = condition_line(o);
    j["elapsedSeconds"] = seconds_between(f.start, f.end);
    j["loadAverageBefore"] = f.load_before;
    j["loadAverageAfter"] = f.load_after;

    std::vector<std::string> failures;
    json tp = {{"produce", nullptr}, {"consume", nullptr}, {"endToEnd", nullptr}};
    json secs = tp;
    if (producing) {
        tp["produce"] = rate(static_cast<double>(p.inserted), p.span.seconds());
        secs["produce"] = seconds_or_null(p.span.seconds());
        j["produce"] = json{{"inserted", p.inserted}, {"transactions", p.transactions}};
        if (p.inserted < o.messages)
            failures.push_back(fmt::format("{} events not inserted", o.messages - p.inserted));
    }
    if (consuming) {
        const double got = v ? static_cast<double>(v->unique) : 0;
        const auto end = c.complete_at ? c.complete_at : c.last_finish;
        const double consume_s = c.first_call && end ? seconds_between(*c.first_call, *end) : 0;
        const double e2e_s = end ? seconds_between(f.start, *end) : 0;
        tp["consume"] = rate(got, consume_s);
        secs["consume"] = seconds_or_null(consume_s);
        tp["endToEnd"] = rate(got, e2e_s);
        secs["endToEnd"] = seconds_or_null(e2e_s);
        j["consume"] = json{{"batches", c.batches},
                            {"emptyBatches", c.empty_batches},
                            {"emptyPolls", c.empty_polls},
                            {"events", c.events},
                            {"eventsPerBatch", c.batches ? static_cast<double>(c.events) / static_cast<double>(c.batches) : 0.0}};
    }
    j["throughput"] = tp;
    j["seconds"] = secs;

    if (v) {
        j["verification"] = json{{"duplicates", v->duplicates}, {"missing", v->missing},
                                 {"orderViolations", v->order_violations}, {"expected", v->expected},
                                 {"delivered", v->delivered}, {"unique", v->unique},
                                 {"unexpected", v->unexpected}};
        if (v->duplicates) failures.push_back(fmt::format("{} duplicate events", v->duplicates));
        if (v->missing) failures.push_back(fmt::format("{} events missing", v->missing));
        if (v->unexpected) failures.push_back(fmt::format("{} unexpected events", v->unexpected));
        if (v->order_violations) failures.push_back(fmt::format("{} order violations", v->order_violations));
    } else {
        // produce mode: nothing was received; what can be checked is that every insert committed.
        j["verification"] = json{{"duplicates", nullptr}, {"missing", nullptr}, {"orderViolations", nullptr},
                                 {"inserted", p.inserted},
                                 {"notInserted", o.messages > p.inserted ? o.messages - p.inserted : 0}};
    }
    switch (f.reason) {
        case stop_reason::none: break;
        case stop_reason::fatal: failures.insert(failures.begin(), "stopped on an error: " + f.detail); break;
        case stop_reason::time_limit:
            failures.insert(failures.begin(), fmt::format("time limit of {} s reached", o.max_seconds));
            break;
        case stop_reason::stalled:
            failures.insert(failures.begin(), fmt::format("stalled: no event finished for {} s", o.stall_seconds));
            break;
        case stop_reason::interrupted: failures.insert(failures.begin(), "interrupted by a signal"); break;
    }
    j["failures"] = failures;
    if (f.reason == stop_reason::time_limit || f.reason == stop_reason::stalled) r.exit_code = 3;
    else if (!failures.empty()) r.exit_code = 1;
    j["result"] = r.exit_code == 0 ? "ok" : "failed";
    return r;
}

std::string render_table(const result& r) {
    const json& j = r.json;
    std::string out;
    const auto label = j["label"].get<std::string>();
    out += fmt::format("pgq_bench{}\n", label.empty() ? "" : "  [" + label + "]");
    out += fmt::format("conditions: {}\n", j["conditionLine"].get<std::string>());
    out += fmt::format("elapsed: {:.2f} s; load average before: {}, after: {}\n\n", j["elapsedSeconds"].get<double>(),
                       j["loadAverageBefore"].get<std::string>(), j["loadAverageAfter"].get<std::string>());
    out += "throughput                 msgs/s   over (s)\n";
    const auto& tp = j["throughput"];
    const auto& secs = j["seconds"];
    auto row = [&](const char* key, const char* name) {
        if (tp[key].is_null()) return;
        out += fmt::format("  {:<22}{:>10.0f}{:>10.2f}\n", name, tp[key].get<double>(), secs[key].get<double>());
    };
    row("produce", "produce");
    row("consume", "consume");
    row("endToEnd", "end-to-end");
    out += '\n';
    if (j.contains("produce"))
        out += fmt::format("produce: {} events inserted in {} transactions\n", j["produce"]["inserted"].get<std::uint64_t>(),
                           j["produce"]["transactions"].get<std::uint64_t>());
    if (j.contains("consume")) {
        const auto& c = j["consume"];
        out += fmt::format("consume: {} batches ({} without events; {:.1f} events/batch), {} empty next_batch polls\n",
                           c["batches"].get<std::uint64_t>(), c["emptyBatches"].get<std::uint64_t>(),
                           c["eventsPerBatch"].get<double>(), c["emptyPolls"].get<std::uint64_t>());
    }
    const auto& v = j["verification"];
    if (v.contains("expected"))
        out += fmt::format(
            "verification: expected {}, delivered {}, unique {}, duplicates {}, missing {}, order violations {}, "
            "unexpected {}\n",
            v["expected"].get<std::uint64_t>(), v["delivered"].get<std::uint64_t>(), v["unique"].get<std::uint64_t>(),
            v["duplicates"].get<std::uint64_t>(), v["missing"].get<std::uint64_t>(),
            v["orderViolations"].get<std::uint64_t>(), v["unexpected"].get<std::uint64_t>());
    else
        out += fmt::format("verification: {} inserted, {} not inserted (nothing consumed in this mode)\n",
                           v["inserted"].get<std::uint64_t>(), v["notInserted"].get<std::uint64_t>());
    out += fmt::format("result: {}\n", j["result"].get<std::string>());
    for (const auto& f : j["failures"]) out += fmt::format("  - {}\n", f.get<std::string>());
    return out;
}

}  // namespace pgq_bench
