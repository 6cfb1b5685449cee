// libFuzzer harness for the HTTP body parsers (the delivery routes' and the stream routes'): any
// input must end in a parsed request or an api_error (a 4xx), never in another exception, a
// crash or a hang, at any nesting depth. A
// push keeps each payload as the bytes sent: a part of the body that is JSON on its own.
#include "api/shared/json_guard.hpp"
#include "api/shared/push_request.hpp"
#include "api/shared/requests.hpp"
#include "api/shared/transaction_request.hpp"
#include "api/streams/stream_requests.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace queen::api;
    const limits lim{.max_payload_depth = 1000};  // the database's value (docs/json-input.md)
    std::string_view body(reinterpret_cast<const char*>(data), size);
    nlohmann::json parsed;
    try {
        parsed = parse_json_body(body, lim).value;
    } catch (const api_error&) {
        return 0;
    }
    auto check_items = [&](const std::vector<queen::domain::push_item>& items) {
        for (const auto& item : items) {
            if (item.queue.empty() || item.partition.empty() || item.transaction_id.empty()) __builtin_trap();
            // A stored payload is valid JSON within the depth limit, and the bytes sent.
            if (!nlohmann::json::accept(item.payload)) __builtin_trap();
            if (json_nesting_depth(nlohmann::json::parse(item.payload), lim.max_payload_depth) > lim.max_payload_depth)
                __builtin_trap();
            if (item.payload != "null" && body.find(item.payload) == std::string_view::npos) __builtin_trap();
        }
    };
    try {
        check_items(parse_push(body, lim).items);
    } catch (const api_error&) {
    }
    try {
        for (const auto& op : parse_transaction(body, lim).operations) check_items(op.items);
    } catch (const api_error&) {
    }
    try {
        // A cycle's body fails as a value (refusal) or a 4xx; its push items and state values
        // are parts of the body that are JSON on their own.
        auto cycle = parse_stream_cycle(body, lim);
        check_items(cycle.call.push_items);
        if (cycle.call.derive_transaction_id.size() != cycle.call.push_items.size()) __builtin_trap();
        for (const auto& op : cycle.call.state_ops)
            if (op.upsert && (!nlohmann::json::accept(op.value) || body.find(op.value) == std::string_view::npos))
                __builtin_trap();
    } catch (const api_error&) {
    }
    try {
        (void)parse_stream_register(body, lim);
    } catch (const api_error&) {
    }
    try {
        (void)parse_stream_state_get(body, lim);
    } catch (const api_error&) {
    }
    try {
        (void)parse_ack(parsed, lim);
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
