#pragma once
// POST /api/v1/transaction: parsing and validation (pure; api_error for a 4xx).
#include "api/shared/requests.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace queen::api {

struct transaction_op {
    enum class kind { push, ack } type = kind::push;
    std::vector<domain::push_item> items;  // push
    ack_item ack;                          // ack
};

struct transaction_request {
    std::vector<transaction_op> operations;
    std::vector<std::string> required_leases;  // canonical UUID text
    util::memory_budget::ticket budget_share;  // the body's, held while the operations are
};

// The body checked as JSON; push operations keep their payloads as the bytes sent (push_request.hpp).
transaction_request parse_transaction(std::string_view body, const limits& lim);

}  // namespace queen::api
