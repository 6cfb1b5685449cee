#include "api/shared/json_guard.hpp"

#include "util/hex_digit.hpp"
#include "util/utf8.hpp"

#include "api/shared/api_error.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <utility>
#include <algorithm>
#include <cstdint>
#include <vector>

namespace queen::api {

namespace {

// The code unit of the four hex digits at text[at], or -1 when they are not four hex digits.
long hex4(std::string_view text, std::size_t at) {
    if (at + 4 > text.size()) return -1;
    long v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        int h = util::hex_digit_value(text[at + i]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

[[noreturn]] void unpaired_surrogate(long unit, std::size_t at) {
    throw bad_request(fmt::format(
        "a string holds the unpaired UTF-16 surrogate \\u{:04X} at byte {}; PostgreSQL cannot store it", unit, at));
}

// Checks the escape starting at text[at] (the backslash); returns the index after it.
std::size_t check_escape(std::string_view text, std::size_t at) {
    if (at + 1 >= text.size() || text[at + 1] != 'u') return at + 2;  // other escapes: the parser checks them
    const long unit = hex4(text, at + 2);
    if (unit < 0) return at + 2;
    if (unit >= 0xDC00 && unit <= 0xDFFF) unpaired_surrogate(unit, at);
    if (unit < 0xD800 || unit > 0xDBFF) return at + 6;
    const bool low_follows = at + 7 < text.size() && text[at + 6] == '\\' && text[at + 7] == 'u';
    const long low = low_follows ? hex4(text, at + 8) : -1;
    if (low < 0xDC00 || low > 0xDFFF) unpaired_surrogate(unit, at);
    return at + 12;
}

}  // namespace

std::size_t check_json_text(std::string_view text, std::size_t max_payload_depth, std::size_t max_values) {
    const std::size_t max_depth = max_payload_depth + envelope_depth_allowance;
    std::size_t depth = 0;
    std::size_t values = 0;
    bool in_string = false;
    bool in_literal = false;  // inside a number, true, false or null
    auto count_value = [&](std::size_t at) {
        if (++values > max_values)
            throw api_error(error_code::payload_too_large,
                            fmt::format("the body holds more than {} JSON values (the limit is reached at byte {})",
                                        max_values, at));
    };
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x80) {
            const std::size_t n = util::utf8_sequence_length(text, i);
            if (n == 0) throw bad_request(fmt::format("invalid UTF-8 at byte {}", i));
            i += n;
            continue;
        }
        if (in_string) {
            if (c == '"')
                in_string = false;
            else if (c == '\\') {
                i = check_escape(text, i);
                continue;
            } else if (c < 0x20) {
                throw bad_request(
                    fmt::format("a string holds the control character 0x{:02x} unescaped at byte {}", c, i));
            }
            ++i;
            continue;
        }
        const bool literal_byte = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' ||
                                  c == '.' || (c >= 'A' && c <= 'Z');
        if (literal_byte && !in_literal) count_value(i);
        in_literal = literal_byte;
        if (c < 0x20 && c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            // nlohmann's parser takes a NUL byte for the end of the input: what follows it
            // would be ignored instead of refused.
            throw bad_request(fmt::format("the control character 0x{:02x} at byte {} is not JSON", c, i));
        } else if (c == '"') {
            in_string = true;
            count_value(i);
        } else if (c == '[' || c == '{') {
            count_value(i);
            if (++depth > max_depth)
                throw bad_request(fmt::format(
                    "JSON nests deeper than {} levels at byte {}; a payload may nest at most {} levels and the "
                    "request around it {} more",
                    max_depth, i, max_payload_depth, envelope_depth_allowance));
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
        ++i;
    }
    return values;
}

util::memory_budget::ticket admit_json_body(std::string_view body, const config::limits& lim, std::size_t bytes_factor,
                                            std::size_t per_value_cost) {
    if (body.empty()) throw bad_request("request body is empty; a JSON object is required");
    const std::size_t values = check_json_text(body, lim.max_payload_depth, lim.max_json_values);
    if (!lim.parse_budget) return {};
    auto share = lim.parse_budget->try_take(body.size() * bytes_factor + values * per_value_cost);
    if (!share)
        throw api_error(error_code::unavailable,
                        "the broker is parsing as many request bodies as its memory budget allows; retry", 1);
    return std::move(*share);
}

void refuse_malformed_json(std::optional<std::size_t> byte, bool number_out_of_range) {
    // e.g. 1e999: valid JSON grammar, but beyond the doubles numbers are read as.
    if (number_out_of_range)
        throw bad_request("a number is out of range: JSON numbers must lie within ±1.7976931348623157e308");
    if (byte) throw bad_request(fmt::format("malformed JSON at byte {}", *byte));
    throw bad_request("malformed JSON");
}

std::size_t json_nesting_depth(const nlohmann::json& value, std::size_t stop_above) {
    std::size_t deepest = 0;
    std::vector<std::pair<const nlohmann::json*, std::size_t>> pending{{&value, 0}};
    while (!pending.empty()) {
        auto [v, level] = pending.back();
        pending.pop_back();
        if (!v->is_structured()) continue;
        const std::size_t here = level + 1;
        if (here > deepest) deepest = here;
        if (deepest > stop_above) return deepest;
        for (const auto& child : *v) pending.emplace_back(&child, here);
    }
    return deepest;
}

std::size_t json_text_depth(std::string_view text) {
    std::size_t depth = 0;
    std::size_t deepest = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i;  // the escaped character cannot end the string
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return deepest;
}

bool json_holds_nul(const nlohmann::json& value) {
    std::vector<const nlohmann::json*> pending{&value};
    while (!pending.empty()) {
        const nlohmann::json* v = pending.back();
        pending.pop_back();
        if (v->is_string() && v->get_ref<const std::string&>().find('\0') != std::string::npos) return true;
        if (v->is_object()) {
            for (auto it = v->begin(); it != v->end(); ++it) {
                if (it.key().find('\0') != std::string::npos) return true;
                pending.push_back(&it.value());
            }
        } else if (v->is_array()) {
            for (const auto& child : *v) pending.push_back(&child);
        }
    }
    return false;
}

bool json_text_holds_nul(std::string_view text) {
    // Outside strings valid JSON has no backslash; inside, each escape is skipped whole, so an
    // escaped backslash followed by "u0000" is text, not a NUL.
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\\') continue;
        if (text.substr(i + 1, 5) == "u0000") return true;
        ++i;
    }
    return false;
}

}  // namespace queen::api
