#pragma once
// A request body checked as JSON without building a document that outlives the check, kept
// with the padding simdjson reads past its end, so that a route can walk its envelope with
// simdjson's On-Demand API and keep values (push payloads) as the bytes the client sent
// (docs/json-input.md, "Payloads are kept as sent").
#include "config/limits.hpp"
#include "util/memory_budget.hpp"

#include <simdjson.h>

#include <array>
#include <cstddef>
#include <memory>
#include <string_view>

namespace queen::api {

class json_text_body {
public:
    // Checks body: 400 naming what is wrong when it is not JSON or breaks a rule of
    // check_json_text, 413 past lim.max_json_values, 503 with Retry-After when lim.parse_budget
    // cannot take its cost now (its bytes twice plus per_value_cost for each value: what the
    // checks and the route's own parsing hold at most).
    json_text_body(std::string_view body, const config::limits& lim, std::size_t per_value_cost);

    // The body as sent (a leading UTF-8 byte order mark left out, as JSON parsers do).
    std::string_view text() const noexcept { return {text_.data(), text_.size()}; }
    // A part of text(), with the readable bytes behind it, for an On-Demand walk of that part.
    simdjson::padded_string_view padded(std::string_view part) const noexcept;
    // The deepest nesting a walk of this body may meet.
    std::size_t max_depth() const noexcept { return max_depth_; }
    // The body's share of the parse budget, for the request to hold while it keeps what it read.
    util::memory_budget::ticket take_budget_share() noexcept { return std::move(budget_share_); }

private:
    simdjson::padded_string text_;
    std::size_t max_depth_;
    util::memory_budget::ticket budget_share_;
};

// On-Demand parsers for walking one body, one per nesting level of walks in progress: reused by
// the thread for small bodies, owned (and freed with this object) for large ones, so that one
// large body does not leave its buffers behind.
class ondemand_parsers {
public:
    static constexpr std::size_t levels = 3;
    explicit ondemand_parsers(const json_text_body& body);
    simdjson::ondemand::parser& at(std::size_t level);

private:
    const json_text_body& body_;
    std::array<std::unique_ptr<simdjson::ondemand::parser>, levels> own_;
};

// The last occurrence of a key in an object being walked (later duplicates win, as in jsonb
// and JavaScript's JSON.parse).
struct json_field {
    bool present = false;
    simdjson::ondemand::json_type type = simdjson::ondemand::json_type::null;
    // A string's unescaped value (held by the walk's parser until its next document), or the
    // raw JSON of any other value (and of a string read raw), a view of the body.
    std::string_view text;

    bool absent_or_null() const noexcept { return !present || type == simdjson::ondemand::json_type::null; }
    // Reads v into this field; a string is unescaped unless raw. Consumes v.
    void read(simdjson::ondemand::value& v, bool raw = false);
};

// The value of a simdjson result; a simdjson error on a body json_text_body accepted is a
// broker fault (std::logic_error, answered 500), never the client's.
template <typename T>
T take(simdjson::simdjson_result<T>&& result);

// The text of v exactly as sent, without the white space after it. Consumes v.
std::string_view raw_json_of(simdjson::ondemand::value& v);

// The JSON type of v, named as the request parsers name types in their errors: "array",
// "object", "number", "string", "boolean", "null".
const char* json_type_name(simdjson::ondemand::json_type type);

[[noreturn]] void simdjson_fault(simdjson::error_code error);

template <typename T>
T take(simdjson::simdjson_result<T>&& result) {
    T value;
    if (auto error = std::move(result).get(value)) simdjson_fault(error);
    return value;
}

}  // namespace queen::api
