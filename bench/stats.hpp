#pragma once
// Measurements: latency samples and the counters each producer / consumer connection keeps
// for itself (no sharing while the run is going; merged at the end).
#include "ledger.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace queen::bench {

using steady = std::chrono::steady_clock;

// Wall-clock microseconds since the epoch: comparable between processes on one machine.
std::int64_t wall_us();

struct latency_summary {
    std::uint64_t count = 0;
    double mean_ms = 0, p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
};

class latency_recorder {
public:
    void add(steady::duration d);
    void add_us(std::int64_t us);
    void merge(const latency_recorder& other);
    std::size_t size() const { return samples_.size(); }
    // Sorts the samples (nearest-rank percentiles).
    latency_summary summarize();

private:
    std::vector<std::uint32_t> samples_;  // microseconds, saturated at ~71 minutes
};

// Earliest start / latest end of an activity over many connections.
struct time_span {
    std::optional<steady::time_point> first, last;
    void start(steady::time_point t) {
        if (!first || t < *first) first = t;
    }
    void end(steady::time_point t) {
        if (!last || t > *last) last = t;
    }
    void merge(const time_span& o) {
        if (o.first) start(*o.first);
        if (o.last) end(*o.last);
    }
    double seconds() const {
        if (!first || !last || *last <= *first) return 0;
        return std::chrono::duration<double>(*last - *first).count();
    }
};

struct producer_stats {
    latency_recorder push;       // successful push requests
    std::uint64_t requests = 0;  // successful push requests
    std::uint64_t queued = 0;    // items answered "queued"
    std::uint64_t buffered = 0;  // items answered "buffered" (broker spool)
    std::uint64_t duplicate_answers = 0;        // "duplicate" for a first attempt: wrong
    std::uint64_t duplicate_after_retry = 0;    // "duplicate" after a retried request: expected
    std::uint64_t bad_answers = 0;              // missing or malformed items, other statuses
    std::uint64_t offset_regressions = 0;       // a later push got a lower offset in a partition
    std::uint64_t failed_requests = 0;          // transport errors and non-2xx answers
    std::uint64_t retries = 0;
    std::uint64_t bytes_sent = 0;
    time_span span;
    // Send times of first attempts (for the achieved rate): first, last and the last one's size.
    time_span sends;
    std::uint64_t last_send_items = 0;
    // --rate only: send time - scheduled slot per batch, schedule slips and the time they skipped.
    latency_recorder send_lateness;
    std::uint64_t slips = 0;
    double slipped_seconds = 0;
    // Records a first attempt of a batch of n messages sent at t.
    void note_send(steady::time_point t, std::uint64_t n);
    void merge(const producer_stats& o);
};

struct consumer_stats {
    latency_recorder pop;        // pops that returned messages
    latency_recorder pop_empty;  // 204 pops
    latency_recorder ack;
    latency_recorder e2e;        // producer send time -> pop response received
    std::uint64_t pops = 0, empty_pops = 0, messages = 0;
    std::uint64_t ack_requests = 0;
    std::uint64_t ack_failures = 0;  // items of ack answers with success:false
    std::uint64_t ack_noops = 0;
    std::uint64_t failed_requests = 0;
    std::uint64_t retries = 0;
    std::uint64_t malformed = 0;  // messages whose payload is not a bench payload
    std::uint64_t bytes_received = 0;
    time_span span;  // first pop sent .. last settle
    std::vector<delivery> deliveries;
    void merge(consumer_stats&& o);
};

// One pipeline stage's forwarding workers (stages 0..S-2; the last stage is consumer_stats).
struct stage_stats {
    latency_recorder pop;          // pops that returned messages
    latency_recorder pop_empty;    // 204 pops
    latency_recorder transaction;  // forward-and-ack transactions answered (success or not)
    latency_recorder release;      // lease releases after a rolled-back transaction
    std::uint64_t pops = 0, empty_pops = 0, messages = 0;
    std::uint64_t transactions = 0;         // answered success:true
    std::uint64_t failed_transactions = 0;  // answered success:false (rolled back, span popped again)
    std::uint64_t injected_failures = 0;    // of those, made to fail by --inject-tx-failures
    std::uint64_t lease_releases = 0;       // ack/batch status retry requests after a rollback
    std::uint64_t release_failures = 0;     // release acks not successful (the lease then expires)
    std::uint64_t forwarded = 0;            // messages pushed into the next stage (queued, or
                                            // duplicate after a retried request)
    std::uint64_t forward_duplicates = 0;   // "duplicate" on a first attempt: forwarded twice
    std::uint64_t forward_other = 0;        // push results neither queued nor duplicate
    std::uint64_t failed_requests = 0;      // transport errors and non-2xx answers
    std::uint64_t retries = 0;
    std::uint64_t malformed = 0;            // popped payloads that are not bench payloads
    std::uint64_t bytes_received = 0;
    time_span span;  // first pop sent .. last successful transaction answered
    void merge(const stage_stats& o);
};

}  // namespace queen::bench
