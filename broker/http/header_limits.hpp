#pragma once
// The limits on a request's header (config::abuse_limits): its size, which Beast's parser
// enforces while it reads, and its number of fields, checked once the header is read. Both
// are answered 431 (RFC 6585) and the connection is closed.
#include "config/abuse_limits.hpp"
#include "http/types.hpp"

#include <cstddef>
#include <optional>
#include <string>

namespace queen::http {

struct header_limits {
    std::size_t max_bytes = config::abuse_limits{}.max_header_bytes;  // request line and fields
    std::size_t max_count = config::abuse_limits{}.max_header_count;  // fields; 0: any number
};

// Sets the parser's header size limit (Beast then fails with bhttp::error::header_limit).
void apply_header_limits(bhttp::request_parser<bhttp::string_body>& parser, const header_limits& limits);

// The 431 answer's text when the header is larger than max_bytes.
std::string header_too_large(const header_limits& limits);

// The 431 answer's text when `header` has more fields than max_count, else none.
std::optional<std::string> header_count_violation(const bhttp::request_header<>& header, const header_limits& limits);

}  // namespace queen::http
