#pragma once
// The array parameters of queen.push (and queen.push_spooled, queen.transaction) for a set
// of requests: items grouped by (queue, partition), each group's items in request order, and
// the way back from a result row's item number to its request. Used only inside the store.
#include "domain/push_item.hpp"

#include <utility>
#include <string>
#include <vector>

namespace queen::store {

struct push_batch {
    // Text array literals: $1 queues, $2 partitions, $3 counts, $4 txids, $5 trace ids,
    // $6 producers, $7 payloads (in the order queen.push takes them).
    std::vector<std::string> arrays;
    // SQL item k (1-based) is position[k - 1] = (request index, item index).
    std::vector<std::pair<std::size_t, std::size_t>> position;
};

push_batch make_push_batch(const std::vector<const std::vector<domain::push_item>*>& requests);

// The (request, item) of result row item number `item` (1-based); throws std::runtime_error
// for a number the batch does not hold.
std::pair<std::size_t, std::size_t> position_of(const push_batch& batch, std::size_t item);

}  // namespace queen::store
