#pragma once
// The pipeline's atomic forward-and-ack: ONE POST /api/v1/transaction per popped batch that
// pushes every message into the next stage's queue (same payload, same partition,
// transactionId <original>-s<next stage>) and acks every popped message (transactionId,
// partitionId, leaseId, status completed); and the reading of its answer.
#include "pop_answer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace queen::bench {

// "<original>" of "<original>-s<stage>" (stage > 0), else the id unchanged: the producer's transactionId.
std::string original_transaction_id(const std::string& transaction_id, std::size_t stage);

// The transaction body forwarding `batch` (popped at `stage`) into `next_queue`, stage + 1;
// with `poison` one more ack that cannot resolve is appended, so the broker rolls it all back.
std::string forward_body(const std::vector<popped_message>& batch, std::size_t stage, const std::string& next_queue,
                         bool poison);

struct forward_outcome {
    bool well_formed = false;      // {success: bool, results: [...]}
    bool success = false;
    std::uint64_t queued = 0;      // push results "queued"
    std::uint64_t duplicates = 0;  // push results "duplicate"
    std::uint64_t other = 0;       // push results with another status (e.g. "buffered") or failed
    std::string error;             // the broker's error when success is false
};

// Reads a transaction answer.
forward_outcome check_forward_answer(const std::string& body);

}  // namespace queen::bench
