#include "stats.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace queen::bench {

std::int64_t wall_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void latency_recorder::add(steady::duration d) {
    add_us(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
}

void latency_recorder::add_us(std::int64_t us) {
    if (us < 0) us = 0;
    constexpr std::int64_t cap = std::numeric_limits<std::uint32_t>::max();
    samples_.push_back(static_cast<std::uint32_t>(std::min(us, cap)));
}

void latency_recorder::merge(const latency_recorder& other) {
    samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
}

latency_summary latency_recorder::summarize() {
    latency_summary s;
    s.count = samples_.size();
    if (samples_.empty()) return s;
    std::sort(samples_.begin(), samples_.end());
    auto rank = [&](double q) {
        // nearest rank: the smallest sample with at least q of all samples at or below it
        auto k = static_cast<std::size_t>(q * static_cast<double>(samples_.size()) + 0.999999);
        k = std::clamp<std::size_t>(k, 1, samples_.size());
        return samples_[k - 1] / 1000.0;
    };
    double sum = std::accumulate(samples_.begin(), samples_.end(), 0.0);
    s.mean_ms = sum / static_cast<double>(samples_.size()) / 1000.0;
    s.p50_ms = rank(0.50);
    s.p90_ms = rank(0.90);
    s.p99_ms = rank(0.99);
    s.max_ms = samples_.back() / 1000.0;
    return s;
}

void producer_stats::note_send(steady::time_point t, std::uint64_t n) {
    sends.start(t);
    if (!sends.last || t >= *sends.last) last_send_items = n;
    sends.end(t);
}

void producer_stats::merge(const producer_stats& o) {
    if (o.sends.last && (!sends.last || *o.sends.last >= *sends.last)) last_send_items = o.last_send_items;
    sends.merge(o.sends);
    send_lateness.merge(o.send_lateness);
    slips += o.slips;
    slipped_seconds += o.slipped_seconds;
    push.merge(o.push);
    requests += o.requests;
    queued += o.queued;
    buffered += o.buffered;
    duplicate_answers += o.duplicate_answers;
    duplicate_after_retry += o.duplicate_after_retry;
    bad_answers += o.bad_answers;
    offset_regressions += o.offset_regressions;
    failed_requests += o.failed_requests;
    retries += o.retries;
    bytes_sent += o.bytes_sent;
    span.merge(o.span);
}

void consumer_stats::merge(consumer_stats&& o) {
    pop.merge(o.pop);
    pop_empty.merge(o.pop_empty);
    ack.merge(o.ack);
    e2e.merge(o.e2e);
    pops += o.pops;
    empty_pops += o.empty_pops;
    messages += o.messages;
    ack_requests += o.ack_requests;
    ack_failures += o.ack_failures;
    ack_noops += o.ack_noops;
    failed_requests += o.failed_requests;
    retries += o.retries;
    malformed += o.malformed;
    bytes_received += o.bytes_received;
    span.merge(o.span);
    if (deliveries.empty()) deliveries = std::move(o.deliveries);
    else deliveries.insert(deliveries.end(), o.deliveries.begin(), o.deliveries.end());
}

void stage_stats::merge(const stage_stats& o) {
    pop.merge(o.pop);
    pop_empty.merge(o.pop_empty);
    transaction.merge(o.transaction);
    release.merge(o.release);
    pops += o.pops;
    empty_pops += o.empty_pops;
    messages += o.messages;
    transactions += o.transactions;
    failed_transactions += o.failed_transactions;
    injected_failures += o.injected_failures;
    lease_releases += o.lease_releases;
    release_failures += o.release_failures;
    forwarded += o.forwarded;
    forward_duplicates += o.forward_duplicates;
    forward_other += o.forward_other;
    failed_requests += o.failed_requests;
    retries += o.retries;
    malformed += o.malformed;
    bytes_received += o.bytes_received;
    span.merge(o.span);
}

}  // namespace queen::bench
