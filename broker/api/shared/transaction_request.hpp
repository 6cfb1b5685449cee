#pragma once
// POST /api/v1/transaction: parsing and validation (pure; api_error for a 4xx).
#include "api/shared/requests.hpp"

#include <string>
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
};

transaction_request parse_transaction(const nlohmann::json& body, const limits& lim);

}  // namespace queen::api
