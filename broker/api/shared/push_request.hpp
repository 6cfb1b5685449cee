#pragma once
// POST /api/v1/push (and a transaction's push operations): the body checked as JSON, its
// envelope read without a document, each payload kept as the bytes the client sent
// (docs/json-input.md). Throws api_error naming exactly what is wrong.
#include "api/shared/json_body.hpp"
#include "domain/push_item.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace queen::api {

// What checking a push body charges the parse budget per JSON value on top of its bytes:
// simdjson's tape and structural index (8 to 16 bytes and 4 to 8 bytes a value).
inline constexpr std::size_t push_value_cost_bytes = 32;

// A parsed push and the body's share of the parse budget, held while the items are.
struct push_request {
    std::vector<domain::push_item> items;
    util::memory_budget::ticket budget_share;
};

// POST /api/v1/push. Items keep request order. Missing transactionIds are generated.
push_request parse_push(std::string_view body, const config::limits& lim);

// The items of a push from its envelope's `items` field (read raw); errors name the field
// `items` and `items[i]`; parsers.at(level) is free for this walk. With ids_generated, one
// element per item tells whether its transactionId was generated (the item had none).
std::vector<domain::push_item> parse_push_items(const json_text_body& body, ondemand_parsers& parsers,
                                                std::size_t level, const json_field& items, const config::limits& lim,
                                                std::vector<bool>* ids_generated = nullptr);

}  // namespace queen::api
