// The human-readable table of a result (the JSON is the source; this only formats it).
#include "report.hpp"

#include <fmt/format.h>

namespace queen::bench {

using nlohmann::json;

namespace {

std::string lat_row(const json& lat, const char* key, const char* name) {
    if (!lat.contains(key)) return {};
    const auto& l = lat[key];
    if (l["count"].get<std::uint64_t>() == 0) return fmt::format("  {:<22}{:>9}\n", name, 0);
    return fmt::format("  {:<22}{:>9}{:>10.2f}{:>10.2f}{:>10.2f}{:>10.2f}{:>10.2f}\n", name, l["count"].get<std::uint64_t>(),
                       l["p50"].get<double>(), l["p90"].get<double>(), l["p99"].get<double>(), l["max"].get<double>(),
                       l["mean"].get<double>());
}

// "duration: 600 s in intervals of 60 s: consume median … /s": duration mode's summary line.
std::string duration_row(const json& d) {
    std::string out = fmt::format("duration: {} s in intervals of {} s, {} messages sent; ", d["durationSeconds"].get<unsigned>(),
                                  d["intervalSeconds"].get<unsigned>(), d["messagesSent"].get<std::uint64_t>());
    const auto& c = d["consumePerSecond"];
    if (c.is_null()) out += "no full interval";
    else
        out += fmt::format("consumed per interval median {:.0f}/s, min {:.0f}/s, max {:.0f}/s over {} full intervals",
                           c["median"].get<double>(), c["min"].get<double>(), c["max"].get<double>(),
                           d["fullIntervals"].get<std::size_t>());
    if (d["drainSeconds"].is_null()) out += "; the drain after the deadline did not finish\n";
    else out += fmt::format("; drained the rest in {:.2f} s after the deadline\n", d["drainSeconds"].get<double>());
    return out;
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
    const bool fan_out = j["conditions"]["groups"].get<std::uint64_t>() > 0;
    const bool pipeline = j.contains("pipeline");
    tp_row("push", "pushSeconds", "push");
    if (fan_out) {
        tp_row("consume", "consumeSeconds", "consume (deliveries)");
        tp_row("endToEnd", "endToEndSeconds", "end-to-end (deliveries)");
        tp_row("endToEndMessages", "endToEndSeconds", "end-to-end per group");
    } else {
        tp_row("consume", "consumeSeconds",
               pipeline ? "consume (last stage)"
               : j["conditions"]["acks"].get<std::string>() == "auto" ? "consume (autoAck pop)"
                                                                     : "consume (pop+ack)");
        tp_row("endToEnd", "endToEndSeconds", "end-to-end");
    }
    if (j.contains("rate")) {
        const auto& rt = j["rate"];
        const auto& late = rt["sendLatenessMs"];
        out += fmt::format(
            "  offered rate: target {}/s, achieved {:.1f}/s (batch every {:.1f} ms per producer); sends behind schedule "
            "p50 {:.2f} / p99 {:.2f} / max {:.2f} ms; {} slips ({:.2f} s skipped){}\n",
            rt["target"].get<std::uint64_t>(), rt["achieved"].get<double>(), rt["batchIntervalMsPerProducer"].get<double>(),
            late["count"].get<std::uint64_t>() ? late["p50"].get<double>() : 0.0,
            late["count"].get<std::uint64_t>() ? late["p99"].get<double>() : 0.0,
            late["count"].get<std::uint64_t>() ? late["max"].get<double>() : 0.0, rt["slips"].get<std::uint64_t>(),
            rt["slippedSeconds"].get<double>(),
            rt["held"].get<bool>() ? ": schedule held" : ": NOT held, the producers fell behind the schedule");
    }
    const auto& lat = j["latencyMs"];
    out += "\nlatency (ms)               count       p50       p90       p99       max      mean\n";
    out += lat_row(lat, "push", "push request");
    out += lat_row(lat, "pop", pipeline ? "last-stage pop (200)" : "pop request (200)");
    out += lat_row(lat, "popEmpty", pipeline ? "last-stage pop (204)" : "pop request (204)");
    out += lat_row(lat, "ack", pipeline ? "last-stage ack" : "ack request");
    out += lat_row(lat, "transaction", "forward transaction");
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
    if (j.contains("pipeline")) {
        const auto& pl = j["pipeline"];
        out += fmt::format(
            "pipeline: {} stages, verified at {}; {} forward transactions, {} rolled back ({} injected), {} lease "
            "releases ({} failed), {} forward duplicates, {} failed requests\n",
            pl["stages"].get<std::uint64_t>(), pl["verifiedAt"].get<std::string>(), pl["transactions"].get<std::uint64_t>(),
            pl["failedTransactions"].get<std::uint64_t>(), pl["injectedFailures"].get<std::uint64_t>(),
            pl["leaseReleases"].get<std::uint64_t>(), pl["releaseFailures"].get<std::uint64_t>(),
            pl["forwardDuplicates"].get<std::uint64_t>(), pl["failedRequests"].get<std::uint64_t>());
        for (const auto& st : pl["stage"]) {
            const auto& tx = st["latencyMs"]["transaction"];
            out += fmt::format(
                "  s{} -> s{}: {} workers, forwarded {} ({:.0f} msgs/s over {:.2f} s), {} pops ({} empty), {} "
                "transactions + {} rolled back, transaction p50 {:.2f} / p99 {:.2f} ms\n",
                st["stage"].get<std::uint64_t>(), st["stage"].get<std::uint64_t>() + 1, st["workers"].get<std::uint64_t>(),
                st["forwarded"].get<std::uint64_t>(), st["forwardRate"].get<double>(), st["forwardSeconds"].get<double>(),
                st["pops"].get<std::uint64_t>(), st["emptyPops"].get<std::uint64_t>(),
                st["transactions"].get<std::uint64_t>(), st["failedTransactions"].get<std::uint64_t>(),
                tx["count"].get<std::uint64_t>() ? tx["p50"].get<double>() : 0.0,
                tx["count"].get<std::uint64_t>() ? tx["p99"].get<double>() : 0.0);
        }
    }
    if (j.contains("duration")) out += duration_row(j["duration"]);
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
        if (v.contains("groups")) {
            out += "  per group                         delivered    unique  duplicates   missing  order violations\n";
            for (const auto& g : v["groups"])
                out += fmt::format("  {:<32}{:>11}{:>10}{:>12}{:>10}{:>18}\n", g["group"].get<std::string>(),
                                   g["deliveries"].get<std::uint64_t>(), g["unique"].get<std::uint64_t>(),
                                   g["duplicates"].get<std::uint64_t>(), g["missing"].get<std::uint64_t>(),
                                   g["orderViolations"].get<std::uint64_t>());
        }
    }
    out += fmt::format("result: {}\n", j["result"].get<std::string>());
    for (const auto& f : j["failures"]) out += fmt::format("  - {}\n", f.get<std::string>());
    return out;
}

}  // namespace queen::bench
