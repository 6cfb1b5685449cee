#pragma once
// What the consumer received, and the verdict: every seq in [0, N) exactly once, and each
// producer's seqs in increasing order (a producer commits one transaction at a time, so its
// events have a defined order; events of different producers are not compared).
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace pgq_bench {

struct verdict {
    std::uint64_t expected = 0;
    std::uint64_t delivered = 0;         // events received, including repeats and strangers
    std::uint64_t unique = 0;            // distinct seqs of [0, expected) received
    std::uint64_t duplicates = 0;        // receipts of a seq already received
    std::uint64_t missing = 0;           // seqs of [0, expected) never received
    std::uint64_t unexpected = 0;        // payloads not ours, or seqs outside [0, expected)
    std::uint64_t order_violations = 0;  // first receipts below the same producer's previous seq
    bool clean() const { return duplicates == 0 && missing == 0 && unexpected == 0 && order_violations == 0; }
};

// Single-threaded: owned by the one consumer.
class tally {
public:
    explicit tally(std::uint64_t expected);

    // Classifies one received event by its payload, in the order the queue handed them out.
    void record(std::string_view payload);

    std::uint64_t unique() const { return unique_; }
    bool complete() const { return unique_ == expected_; }
    verdict result() const;

private:
    std::uint64_t expected_;
    std::vector<std::uint8_t> seen_;
    std::vector<std::optional<std::uint64_t>> last_seq_;  // per producer id
    std::uint64_t delivered_ = 0, unique_ = 0, duplicates_ = 0, unexpected_ = 0, order_violations_ = 0;
};

}  // namespace pgq_bench
