// libFuzzer harness for the request-header path a session runs before any handler: Beast's
// parser under our header limits (config::abuse_limits), the field-count check, and the
// target's split into path and decoded query. Any bytes end in a parsed request or an error
// code, never in an exception, a crash, a hang or a header past the limits.
#include "http/header_limits.hpp"
#include "http/url.hpp"

#include <boost/asio/buffer.hpp>

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace queen::http;
    const header_limits limits{2048, 32};
    bhttp::request_parser<bhttp::string_body> parser;
    parser.body_limit(64 * 1024);
    apply_header_limits(parser, limits);
    boost::beast::error_code ec;
    // Fed in pieces, as a socket delivers them, into a buffer the parser consumes from (the
    // session's flat_buffer).
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    std::string pending;
    std::size_t fed = 0, consumed = 0;
    while (!parser.is_header_done() && fed < input.size()) {
        pending.append(input.substr(fed, 7));
        fed = std::min(input.size(), fed + 7);
        const auto used = parser.put(boost::asio::buffer(pending.data(), pending.size()), ec);
        pending.erase(0, used);
        consumed += used;
        if (ec == bhttp::error::need_more) ec = {};
        if (ec) return 0;
    }
    if (!parser.is_header_done()) return 0;
    // A header the parser took is within the byte limit.
    if (consumed > limits.max_bytes) __builtin_trap();
    const auto& header = parser.get().base();
    (void)header_count_violation(header, limits);
    if (auto target = parse_target(header.target())) {
        for (const auto& segment : target->segments) (void)percent_decode(segment, false);
    }
    return 0;
}
