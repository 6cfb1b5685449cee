#pragma once
// The checks every JSON request body passes before a parser sees it, and the payload depth
// rule (docs/json-input.md). The body scan is one linear pass without recursion, so that no
// later step (the parser, re-serialization, copies) can meet a nesting deeper than the
// payload limit plus the envelope allowance.
#include "config/limits.hpp"
#include "util/memory_budget.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <limits>
#include <optional>
#include <string_view>

namespace queen::api {

// Levels a route's envelope may add around a payload ({operations:[{items:[{payload:…}]}]}
// is five): a body may nest at most payload limit + this.
inline constexpr std::size_t envelope_depth_allowance = 8;

// Counts the values of `text` (every array, object, string, object key, number, true, false
// and null: what a parsed DOM holds) and returns the count. Throws payload_too_large when the
// count passes max_values, and bad_request naming the byte and the rule when `text` nests
// deeper than max_payload_depth + envelope_depth_allowance, holds invalid UTF-8, a control
// character (unescaped in a string, or other than white space outside one), or an unpaired
// UTF-16 surrogate escape (which jsonb refuses). Everything else about the grammar is left to
// the parser.
std::size_t check_json_text(std::string_view text, std::size_t max_payload_depth,
                            std::size_t max_values = std::numeric_limits<std::size_t>::max());

// What every JSON body passes before a parser: 400 when it is empty, check_json_text, then its
// parse cost (body bytes x bytes_factor + values x per_value_cost) taken from lim.parse_budget
// (an empty ticket without one); 503 with Retry-After when the budget cannot take it now.
util::memory_budget::ticket admit_json_body(std::string_view body, const config::limits& lim, std::size_t bytes_factor,
                                            std::size_t per_value_cost);

// 400 for a body a parser refused: the byte where it stopped, or a number beyond the doubles.
[[noreturn]] void refuse_malformed_json(std::optional<std::size_t> byte, bool number_out_of_range);

// The nesting depth of a parsed value: the number of arrays and objects on its deepest
// path (a scalar is 0, [] is 1, {"a":[1]} is 2), counting no further than stop_above + 1.
// Iterative: the value's own depth never reaches the call stack.
std::size_t json_nesting_depth(const nlohmann::json& value, std::size_t stop_above);

// The nesting depth of JSON text, counted like json_nesting_depth (brackets inside strings do
// not count); `text` must be valid JSON. Linear, without recursion.
std::size_t json_text_depth(std::string_view text);

// True when a string or object key anywhere in value holds a NUL character (the escape
// \u0000), which jsonb cannot store. Iterative, like json_nesting_depth.
bool json_holds_nul(const nlohmann::json& value);

// The same for JSON text (`text` must be valid JSON): true when it holds the escape \u0000.
bool json_text_holds_nul(std::string_view text);

}  // namespace queen::api
