#pragma once
// URL pieces: percent-decoding, path segments, query strings.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace queen::http {

// Percent-decodes s; '+' becomes a space when plus_is_space. nullopt for a malformed escape.
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space);

struct parsed_target {
    std::vector<std::string> segments;         // raw (still encoded) path segments
    std::map<std::string, std::string> query;  // decoded
};

// Splits a request target into path segments and a decoded query map; nullopt when the
// query holds a malformed escape.
std::optional<parsed_target> parse_target(std::string_view target);

}  // namespace queen::http
