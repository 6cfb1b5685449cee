#include "http/header_limits.hpp"

#include <iterator>

namespace queen::http {

void apply_header_limits(bhttp::request_parser<bhttp::string_body>& parser, const header_limits& limits) {
    // Beast counts in 32-bit: anything larger is as good as unlimited.
    parser.header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(limits.max_bytes, UINT32_MAX)));
}

std::string header_too_large(const header_limits& limits) {
    return "request header exceeds the limit of " + std::to_string(limits.max_bytes) + " bytes";
}

std::optional<std::string> header_count_violation(const bhttp::request_header<>& header, const header_limits& limits) {
    if (limits.max_count == 0) return std::nullopt;
    const auto n = static_cast<std::size_t>(std::distance(header.begin(), header.end()));
    if (n <= limits.max_count) return std::nullopt;
    return "request has " + std::to_string(n) + " header fields, more than the limit of " +
           std::to_string(limits.max_count);
}

}  // namespace queen::http
