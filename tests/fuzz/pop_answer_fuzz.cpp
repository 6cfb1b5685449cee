// libFuzzer harness for the pop answer renderer over stored frames: any segment bytes either
// fail to decode (segment_error) or render without a crash, whatever their payloads hold (a
// payload nested 100,000 deep included: rendering copies it and never parses it). When every
// payload is JSON the broker would accept, the answer parses and gives each payload back.
#include "api/shared/api_error.hpp"
#include "api/shared/json_guard.hpp"
#include "api/delivery/pop_answer.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace {

bool acceptable_json(std::string_view text) {
    try {
        queen::api::check_json_text(text, 64);
        return nlohmann::json::accept(text);
    } catch (const queen::api::api_error&) {
        return false;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace queen;
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    std::optional<segment::decoded_segment> seg;
    try {
        seg.emplace(segment::decoded_segment::decode(bytes));
    } catch (const segment::segment_error&) {
        return 0;
    }
    const api::pop_message_scope scope{42, "part", "0190f5a8-0000-7000-8000-000000000000", "__QUEUE_MODE__"};
    render::json_writer writer;
    writer.begin_array();
    bool checkable = true;
    std::int64_t offset = 1;
    for (const auto& f : seg->frames()) {
        api::write_pop_message(writer, scope, offset++, f, f.payload);
        checkable = checkable && acceptable_json(f.payload) && acceptable_json("\"" + std::string(f.transaction_id) + "\"") &&
                    (!f.producer_sub || acceptable_json("\"" + std::string(*f.producer_sub) + "\""));
    }
    const std::string out = writer.end_array().take();
    if (!checkable) return 0;
    const auto answer = nlohmann::json::parse(out);  // throws (and so fails the run) when not JSON
    std::size_t i = 0;
    for (const auto& f : seg->frames()) {
        if (answer.at(i).at("data") != nlohmann::json::parse(f.payload)) __builtin_trap();
        if (answer.at(i).at("offset") != static_cast<std::int64_t>(i + 1)) __builtin_trap();
        ++i;
    }
    return 0;
}
