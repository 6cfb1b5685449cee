#pragma once
// A forwarding worker of pipeline stage k < S-1: pops <queue>-s<k> (queue mode, --pop-batch,
// queue-wide route) and forwards each popped batch with one forward-and-ack transaction
// (forward_transaction.hpp) into <queue>-s<k+1>. A transaction answering success:false
// changed nothing: the worker counts it, releases the batch's leases (ack/batch with status
// retry on each partition's first message) and pops again, so the span is forwarded later,
// in order. Transport errors, 5xx and 429 resend the same transaction (the broker
// deduplicates the pushes by transactionId; acks of committed messages are no-ops).
#include "http_client.hpp"
#include "options.hpp"
#include "run_control.hpp"
#include "stats.hpp"

#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <cstdint>
#include <memory>

namespace queen::bench {

// Messages each forwarding stage has moved into the next queue so far (thread-safe).
class stage_progress {
public:
    explicit stage_progress(std::size_t stages)
        : stages_(stages), forwarded_(std::make_unique<std::atomic<std::uint64_t>[]>(stages)) {}
    std::size_t stages() const { return stages_; }  // forwarding stages (S - 1)
    void add(std::size_t stage, std::uint64_t n) { forwarded_[stage] += n; }
    std::uint64_t forwarded(std::size_t stage) const { return forwarded_[stage].load(); }
    // Sum over all stages (a progress measure for the stall check).
    std::uint64_t total() const;

private:
    std::size_t stages_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> forwarded_;
};

// Forwards from stage `stage` until that stage forwarded every message or the run stops.
boost::asio::awaitable<void> run_stage_worker(const options& opts, std::size_t stage, http_client& client,
                                              stage_progress& progress, run_control& control, stage_stats& stats);

}  // namespace queen::bench
