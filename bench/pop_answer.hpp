#pragma once
// The messages of a 200 pop answer, as the consumers and pipeline stages need them: ids for
// acks, the partition, the offset and the bench payload (seq, producer, sentUs).
#include <cstdint>
#include <string>
#include <vector>

namespace queen::bench {

struct popped_message {
    std::string transaction_id;
    std::string partition_id;
    std::string partition;  // partition name
    std::string lease_id;   // the message's leaseId, else the answer's
    std::int64_t offset = -1;
    std::string data;       // the payload as popped, as JSON text
    bool ours = false;      // data is a bench payload: then seq, producer, sent_us are set
    std::uint64_t seq = 0;
    std::uint32_t producer = 0;
    std::int64_t sent_us = 0;
};

// Parses a 200 pop body into `out` (cleared first); false when it is not {messages:[…]}.
bool parse_pop_answer(const std::string& body, std::vector<popped_message>& out);

}  // namespace queen::bench
