#pragma once
// Bodies of POST /api/v1/ack/batch and the check of its answer.
#include "pop_answer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace queen::bench {

// {"consumerGroup":…?,"acknowledgments":[{transactionId, partitionId, leaseId, status}…]} for
// every message of `batch` (group omitted when empty: queue mode).
std::string ack_batch_body(const std::string& group, const std::vector<popped_message>& batch, const char* status);

// As ack_batch_body, but only for the first message of each partition in `batch`: with status
// "retry" this releases every lease of the batch without committing anything.
std::string release_body(const std::string& group, const std::vector<popped_message>& batch);

// Partitions (by partitionId) among the messages of `batch`: the number of acks release_body sends.
std::size_t distinct_partitions(const std::vector<popped_message>& batch);

struct ack_outcome {
    bool well_formed = false;   // an array with one answer per ack
    std::uint64_t failures = 0; // acks answered success:false (all of them when not well formed)
    std::uint64_t noops = 0;
    std::string first_failure;  // the first failing answer, for the error line
};

// Reads an ack/batch answer for `count` acks.
ack_outcome check_ack_answer(const std::string& body, std::size_t count);

}  // namespace queen::bench
