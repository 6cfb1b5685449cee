#include "report_sections.hpp"

#include "report.hpp"
#include "roles.hpp"

namespace queen::bench {

using nlohmann::json;

json verdict_json(const verdict& v) {
    return json{{"expected", v.expected},
                {"deliveries", v.deliveries},
                {"unique", v.unique},
                {"duplicates", v.duplicates},
                {"missing", v.missing},
                {"unexpected", v.unexpected},
                {"orderViolations", v.order_violations()},
                {"offsetOrderViolations", v.offset_order_violations},
                {"fifoViolations", v.fifo_violations},
                {"partitionsSeen", v.partitions_seen}};
}

json rate_section(const options& o, producer_stats& p) {
    // Sends are evenly spaced at the target rate: (accepted - last batch) messages over first -> last send.
    double achieved = 0;
    if (p.sends.first && p.sends.last && *p.sends.last > *p.sends.first) {
        const double accepted = static_cast<double>(p.queued + p.buffered);
        const double span = std::chrono::duration<double>(*p.sends.last - *p.sends.first).count();
        achieved = (accepted - static_cast<double>(p.last_send_items)) / span;
    }
    return json{{"target", o.rate},
                {"achieved", achieved},
                {"held", p.slips == 0},
                {"batchIntervalMsPerProducer",
                 static_cast<double>(o.push_batch) * static_cast<double>(o.producers) * 1000.0 / static_cast<double>(o.rate)},
                {"sendLatenessMs", latency_json(p.send_lateness)},
                {"slips", p.slips},
                {"slippedSeconds", p.slipped_seconds}};
}

json groups_section(const options& o, const std::vector<verdict>& verdicts) {
    json out = json::array();
    for (std::size_t g = 0; g < verdicts.size(); ++g) {
        json one = verdict_json(verdicts[g]);
        one["group"] = group_name(o, g);
        out.push_back(std::move(one));
    }
    return out;
}

json pipeline_section(const options& o, std::vector<stage_stats>& stages) {
    json per_stage = json::array();
    stage_stats total;
    const auto workers = workers_per_stage(o);
    for (std::size_t k = 0; k < stages.size(); ++k) {
        auto& s = stages[k];
        total.merge(s);
        per_stage.push_back(json{{"stage", k},
                                 {"from", stage_queue(o, k)},
                                 {"to", stage_queue(o, k + 1)},
                                 {"workers", workers[k]},
                                 {"pops", s.pops},
                                 {"emptyPops", s.empty_pops},
                                 {"messagesPopped", s.messages},
                                 {"transactions", s.transactions},
                                 {"failedTransactions", s.failed_transactions},
                                 {"injectedFailures", s.injected_failures},
                                 {"leaseReleases", s.lease_releases},
                                 {"releaseFailures", s.release_failures},
                                 {"forwarded", s.forwarded},
                                 {"forwardDuplicates", s.forward_duplicates},
                                 {"forwardOther", s.forward_other},
                                 {"failedRequests", s.failed_requests},
                                 {"retries", s.retries},
                                 {"malformed", s.malformed},
                                 {"forwardRate", rate_per_second(static_cast<double>(s.forwarded), s.span.seconds())},
                                 {"forwardSeconds", s.span.seconds()},
                                 {"latencyMs",
                                  json{{"pop", latency_json(s.pop)},
                                       {"popEmpty", latency_json(s.pop_empty)},
                                       {"transaction", latency_json(s.transaction)},
                                       {"release", latency_json(s.release)}}}});
    }
    return json{{"stages", o.stages},
                {"verifiedAt", stage_queue(o, o.stages - 1)},
                {"transactions", total.transactions},
                {"failedTransactions", total.failed_transactions},
                {"injectedFailures", total.injected_failures},
                {"leaseReleases", total.lease_releases},
                {"releaseFailures", total.release_failures},
                {"forwardDuplicates", total.forward_duplicates},
                {"forwardOther", total.forward_other},
                {"failedRequests", total.failed_requests},
                {"retries", total.retries},
                {"transactionLatencyMs", latency_json(total.transaction)},
                {"stage", per_stage}};
}

}  // namespace queen::bench
