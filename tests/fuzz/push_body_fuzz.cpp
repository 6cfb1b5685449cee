// libFuzzer harness for the HTTP body parsers: any input must end in a parsed request or an
// api_error (a 4xx), never in another exception, a crash or a hang.
#include "api/requests.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace queen::api;
    const limits lim{};
    std::string_view body(reinterpret_cast<const char*>(data), size);
    nlohmann::json parsed;
    try {
        parsed = parse_json_body(body);
    } catch (const api_error&) {
        return 0;
    }
    try {
        auto items = parse_push(parsed, lim);
        for (const auto& item : items) {
            if (item.queue.empty() || item.partition.empty() || item.transaction_id.empty()) __builtin_trap();
            (void)nlohmann::json::parse(item.payload);  // a stored payload is always valid JSON
        }
    } catch (const api_error&) {
    }
    try {
        (void)parse_ack(parsed);
    } catch (const api_error&) {
    }
    try {
        (void)parse_ack_batch(parsed, lim);
    } catch (const api_error&) {
    }
    try {
        (void)parse_configure(parsed, lim);
    } catch (const api_error&) {
    }
    return 0;
}
