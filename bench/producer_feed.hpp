#pragma once
// Which seqs a producer sends: its own contiguous share of --messages (fixed-count runs), or,
// with --duration-seconds, consecutive blocks of one counter shared by every producer until the
// deadline (each producer's seqs still increase, and seq % P still picks the partition).
#include "stats.hpp"

#include <atomic>
#include <cstdint>

namespace queen::bench {

struct producer_plan {
    std::uint32_t id = 0;
    std::uint64_t first_seq = 0;  // this producer sends seqs [first_seq, first_seq + count)
    std::uint64_t count = 0;
};

// Splits `messages` over `producers` contiguous seq ranges.
producer_plan plan_producer(std::uint32_t id, std::uint64_t messages, std::uint64_t producers);

// Seqs [first, first + count); count 0: nothing more to send.
struct seq_block {
    std::uint64_t first = 0;
    std::uint64_t count = 0;
};

// The shared counter of duration mode: consecutive blocks of [0, capacity) (thread-safe).
class seq_counter {
public:
    explicit seq_counter(std::uint64_t capacity) : capacity_(capacity) {}

    // The next block of at most n seqs; count 0 once the capacity is used up.
    seq_block take(std::uint64_t n);
    // Seqs handed out so far: exactly [0, taken()).
    std::uint64_t taken() const;
    bool exhausted() const { return taken() >= capacity_; }

private:
    std::uint64_t capacity_;
    std::atomic<std::uint64_t> next_{0};
};

class producer_feed {
public:
    // Fixed count: the plan's range, batch by batch.
    explicit producer_feed(producer_plan plan);
    // Duration mode: blocks of `shared`; no block is taken at or after `until`.
    producer_feed(std::uint32_t id, seq_counter& shared, steady::time_point until);

    std::uint32_t id() const { return id_; }
    // The next batch of at most `max` seqs given the time now; count 0 when this producer is done.
    seq_block next(std::uint64_t max, steady::time_point now);

private:
    std::uint32_t id_ = 0;
    std::uint64_t next_ = 0, end_ = 0;  // fixed count
    seq_counter* shared_ = nullptr;     // duration mode
    steady::time_point until_{};
};

}  // namespace queen::bench
