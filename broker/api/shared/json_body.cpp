#include "api/shared/json_body.hpp"

#include "api/shared/api_error.hpp"
#include "api/shared/json_guard.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>

namespace queen::api {

namespace {

// Bodies up to this size are parsed with the thread's reused parsers.
constexpr std::size_t reused_parser_capacity = 1 << 20;

constexpr std::string_view utf8_bom = "\xEF\xBB\xBF";

// Records where nlohmann's parser stops, without building a document: the second opinion on
// a body simdjson refuses, and the wording of the refusal.
class first_error final : public nlohmann::json_sax<nlohmann::json> {
public:
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::json::exception& e) override {
        byte = position;
        out_of_range = e.id == 406;  // nlohmann's number overflow
        return false;
    }

    std::optional<std::size_t> byte;
    bool out_of_range = false;
};

// Called when simdjson refuses text: throws the refusal as the broker words it, or returns when
// the text is JSON after all. simdjson refuses integers past 64 bits, which are JSON and within
// the numbers the broker accepts (any finite double); nlohmann reads them, so it decides.
void explain_refusal(std::string_view text, simdjson::error_code error) {
    first_error sax;
    const bool accepted = nlohmann::json::sax_parse(text, &sax);
    if (accepted && error == simdjson::NUMBER_ERROR) return;
    refuse_malformed_json(sax.byte, sax.out_of_range);
}

simdjson::dom::parser& validating_parser(std::size_t size, std::optional<simdjson::dom::parser>& own) {
    if (size > reused_parser_capacity) return own.emplace();
    thread_local simdjson::dom::parser reused;
    return reused;
}

}  // namespace

json_text_body::json_text_body(std::string_view body, const config::limits& lim, std::size_t per_value_cost)
    : max_depth_(lim.max_payload_depth + envelope_depth_allowance),
      budget_share_(admit_json_body(body, lim, 2, per_value_cost)) {
    if (body.starts_with(utf8_bom)) body.remove_prefix(utf8_bom.size());
    text_ = simdjson::padded_string(body);
    std::optional<simdjson::dom::parser> own;
    auto& parser = validating_parser(text_.size(), own);
    // One more level than the deepest body: simdjson counts the document itself.
    if (parser.max_depth() < max_depth_ + 1 || parser.capacity() < text_.size()) {
        if (auto error = parser.allocate(text_.size(), max_depth_ + 1)) simdjson_fault(error);
    }
    if (auto error = parser.parse(text_).error()) explain_refusal(text(), error);
}

simdjson::padded_string_view json_text_body::padded(std::string_view part) const noexcept {
    const std::size_t readable = text_.size() + simdjson::SIMDJSON_PADDING - (part.data() - text_.data());
    return simdjson::padded_string_view(part.data(), part.size(), readable);
}

ondemand_parsers::ondemand_parsers(const json_text_body& body) : body_(body) {}

simdjson::ondemand::parser& ondemand_parsers::at(std::size_t level) {
    thread_local std::array<simdjson::ondemand::parser, levels> reused;
    auto& parser = body_.text().size() <= reused_parser_capacity
                       ? reused.at(level)
                       : *(own_.at(level) ? own_[level] : own_[level] = std::make_unique<simdjson::ondemand::parser>());
    if (parser.max_depth() < body_.max_depth() + 1 || parser.capacity() < body_.text().size()) {
        if (auto error = parser.allocate(body_.text().size(), body_.max_depth() + 1)) simdjson_fault(error);
    }
    return parser;
}

void simdjson_fault(simdjson::error_code error) {
    throw std::logic_error(fmt::format("simdjson refused a checked body: {}", simdjson::error_message(error)));
}

std::string_view raw_json_of(simdjson::ondemand::value& v) {
    std::string_view raw;
    switch (take(v.type())) {
        case simdjson::ondemand::json_type::object:
            raw = take(take(v.get_object()).raw_json());
            break;
        case simdjson::ondemand::json_type::array:
            raw = take(take(v.get_array()).raw_json());
            break;
        default:
            raw = v.raw_json_token();
    }
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\n' || raw.back() == '\r'))
        raw.remove_suffix(1);
    return raw;
}

void json_field::read(simdjson::ondemand::value& v, bool raw) {
    present = true;
    type = take(v.type());
    text = type == simdjson::ondemand::json_type::string && !raw ? take(v.get_string()) : raw_json_of(v);
}

const char* json_type_name(simdjson::ondemand::json_type type) {
    switch (type) {
        case simdjson::ondemand::json_type::array:
            return "array";
        case simdjson::ondemand::json_type::object:
            return "object";
        case simdjson::ondemand::json_type::number:
            return "number";
        case simdjson::ondemand::json_type::string:
            return "string";
        case simdjson::ondemand::json_type::boolean:
            return "boolean";
        case simdjson::ondemand::json_type::null:
            return "null";
    }
    return "value";
}

}  // namespace queen::api
