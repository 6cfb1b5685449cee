#pragma once
// The ledgers of a run, one per stream that is verified on its own (each fan-out group; else
// the one queue, or the pipeline's last stage), and the moment all of them are complete.
#include "ledger.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace queen::bench {

class stream_set {
public:
    stream_set(std::size_t streams, std::uint64_t expected_each);

    std::size_t size() const { return ledgers_.size(); }
    ledger& at(std::size_t i) { return *ledgers_[i]; }
    const ledger& at(std::size_t i) const { return *ledgers_[i]; }

    // Settled first deliveries over all streams (thread-safe).
    std::uint64_t completed() const;
    std::uint64_t expected() const;

    // Adds n first deliveries settled on stream i; true for exactly one call per run: the one
    // that completed the last incomplete stream.
    bool settle(std::size_t i, std::uint64_t n);

private:
    std::vector<std::unique_ptr<ledger>> ledgers_;
    std::atomic<std::size_t> complete_{0};
};

}  // namespace queen::bench
