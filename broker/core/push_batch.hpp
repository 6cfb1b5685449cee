#pragma once
// The array parameters of queen.push for a set of requests: items grouped by (queue,
// partition), each group's items in request order. One definition for plain pushes, fused
// pushes and transactions.
#include "core/push_types.hpp"

#include <string>
#include <utility>
#include <vector>

namespace queen::core {

struct push_batch {
    // Text array literals: $1 queues, $2 partitions, $3 counts, $4 txids, $5 trace ids,
    // $6 producers, $7 payloads (in the order queen.push takes them).
    std::vector<std::string> arrays;
    // SQL item k (1-based) is position[k - 1] = (request index, item index).
    std::vector<std::pair<std::size_t, std::size_t>> position;
};

push_batch make_push_batch(const std::vector<const std::vector<push_item>*>& requests);

}  // namespace queen::core
