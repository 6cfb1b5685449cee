#pragma once
// One producer thread: its own connection, inserting its share of the seqs as PgQ events,
// --batch events per transaction.
#include "options.hpp"
#include "run_state.hpp"

#include <cstdint>
#include <string>

namespace pgq_bench {

struct producer_plan {
    std::uint32_t id = 0;
    std::uint64_t first_seq = 0;  // seqs [first_seq, first_seq + count)
    std::uint64_t count = 0;
};

// Producer `id` of `producers` gets a contiguous range; the ranges split [0, messages) evenly.
producer_plan plan_producer(std::uint32_t id, std::uint64_t messages, std::uint64_t producers);

struct producer_stats {
    std::uint64_t inserted = 0;      // events whose transaction committed
    std::uint64_t transactions = 0;  // committed transactions
    time_span span;                  // first statement sent .. last commit answered
    void merge(const producer_stats& o) {
        inserted += o.inserted;
        transactions += o.transactions;
        span.merge(o.span);
    }
};

// Connects, waits at the start gate, then inserts the plan's events; on any error stops the
// run (stop_reason::fatal with the SQL error) and returns. Never throws.
void run_producer(const options& o, producer_plan plan, run_state& state, producer_stats& st);

}  // namespace pgq_bench
