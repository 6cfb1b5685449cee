#pragma once
// What the consumers saw, and the verdict: every message exactly once, FIFO per partition.
//
// Each message's payload carries its producer and a sequence number `seq` in [0, N) that
// increases within one producer. The consumers record every delivery; at the end the
// deliveries are checked:
//  - duplicates: deliveries of a seq already delivered; missing: seqs never delivered;
//  - order, per partition: offsets must increase in delivery order (with explicit acks a
//    partition's next span is only handed out after the previous one was acked, so the
//    order the consumers received them in is the broker's order; with autoAck pops of one
//    partition may race, so then offset order is used), and in that order the seqs of each
//    producer must increase (a producer sends one request at a time, so its messages to a
//    partition have a defined order). Messages of different producers racing into one
//    partition have no defined relative order and are not compared.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace queen::bench {

struct delivery {
    std::uint64_t pop_ordinal = 0;  // global order in which pop responses were received
    std::uint32_t index = 0;        // position inside that response
    std::uint32_t partition = 0;    // interned partitionId
    std::int64_t offset = 0;
    std::uint64_t seq = 0;
    std::uint32_t producer = 0;
};

struct verdict {
    std::uint64_t expected = 0;
    std::uint64_t deliveries = 0;
    std::uint64_t unique = 0;
    std::uint64_t duplicates = 0;          // deliveries beyond the first of a message
    std::uint64_t missing = 0;             // expected messages never delivered
    std::uint64_t unexpected = 0;          // payloads that are not this run's messages
    std::uint64_t offset_order_violations = 0;  // offsets not increasing in delivery order
    std::uint64_t fifo_violations = 0;          // a producer's seqs not increasing in a partition
    std::uint64_t partitions_seen = 0;
    std::uint64_t order_violations() const { return offset_order_violations + fifo_violations; }
    bool clean() const { return duplicates == 0 && missing == 0 && unexpected == 0 && order_violations() == 0; }
    // Adds another stream's counts (fan-out groups are verified one by one and summed).
    void add(const verdict& o);
};

class ledger {
public:
    // Room for seqs [0, expected); the target is `expected` until set_expected lowers it.
    explicit ledger(std::uint64_t expected);

    std::uint64_t expected() const { return expected_.load(); }
    // Duration mode: the run turned out to send seqs [0, n) only (n <= the room); thread-safe.
    void set_expected(std::uint64_t n);

    // Stable small number for a partitionId (thread-safe).
    std::uint32_t intern_partition(const std::string& partition_id);

    std::uint64_t next_pop_ordinal() { return ordinal_.fetch_add(1); }

    // Marks seq delivered; true on its first delivery. False for out-of-range seqs too.
    bool mark_delivered(std::uint64_t seq);
    void count_unexpected() { ++unexpected_; }

    // Messages delivered for the first time and settled (acked, or popped with autoAck).
    // Returns the new total.
    std::uint64_t add_completed(std::uint64_t n) { return completed_.fetch_add(n) + n; }
    std::uint64_t completed() const { return completed_.load(); }

    // Checks every delivery of the run (all consumers' records, in any order).
    verdict verify(std::vector<delivery> all, bool delivery_order_is_broker_order) const;

private:
    std::uint64_t capacity_;
    std::atomic<std::uint64_t> expected_;
    std::unique_ptr<std::atomic<std::uint8_t>[]> seen_;
    std::atomic<std::uint64_t> ordinal_{0};
    std::atomic<std::uint64_t> completed_{0};
    std::atomic<std::uint64_t> unexpected_{0};
    std::mutex intern_mutex_;
    std::unordered_map<std::string, std::uint32_t> partitions_;
};

}  // namespace queen::bench
