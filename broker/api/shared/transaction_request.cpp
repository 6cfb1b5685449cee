#include "api/shared/transaction_request.hpp"

#include "api/shared/push_request.hpp"
#include "segment/segment_codec.hpp"

#include <fmt/core.h>

namespace queen::api {

using nlohmann::json;
using simdjson::ondemand::json_type;

namespace {

// The raw text of every element of the operations array (each checked to be an object).
std::vector<std::string_view> operation_texts(const json_text_body& body, simdjson::ondemand::parser& parser,
                                              const json_field& operations) {
    std::vector<std::string_view> out;
    if (operations.present && operations.type == json_type::array) {
        auto document = take(parser.iterate(body.padded(operations.text)));
        for (auto element : take(document.get_array())) {
            simdjson::ondemand::value op = take(std::move(element));
            if (take(op.type()) != json_type::object)
                throw bad_request(fmt::format("operations[{}] must be an object", out.size()));
            out.push_back(raw_json_of(op));
        }
    }
    if (out.empty()) throw bad_request("operations must be a non-empty array");
    return out;
}

transaction_op parse_operation(const json_text_body& body, ondemand_parsers& parsers, std::string_view text,
                               const limits& lim) {
    json_field type, items;
    auto document = take(parsers.at(1).iterate(body.padded(text)));
    for (auto member : take(document.get_object())) {
        auto field = take(std::move(member));
        const std::string_view key = take(field.unescaped_key());
        simdjson::ondemand::value value = field.value();
        if (key == "type")
            type.read(value);
        else if (key == "items")
            items.read(value, true);
    }
    transaction_op op;
    if (type.present && type.type == json_type::string && type.text == "push") {
        op.type = transaction_op::kind::push;
        op.items = parse_push_items(body, parsers, 2, items, lim);
    } else if (type.present && type.type == json_type::string && type.text == "ack") {
        // An ack operation holds no payload: read as the ack routes read their bodies.
        op.type = transaction_op::kind::ack;
        op.ack = parse_ack(json::parse(text), lim);
    } else {
        throw bad_request("type must be \"push\" or \"ack\"");
    }
    return op;
}

}  // namespace

transaction_request parse_transaction(std::string_view text, const limits& lim) {
    json_text_body body(text, lim, json_value_cost_bytes);
    ondemand_parsers parsers(body);
    auto document = take(parsers.at(0).iterate(body.padded(body.text())));
    if (take(document.type()) != json_type::object)
        throw bad_request("request body must be a JSON object with an operations array");
    json_field operations, leases;
    for (auto member : take(document.get_object())) {
        auto field = take(std::move(member));
        const std::string_view key = take(field.unescaped_key());
        simdjson::ondemand::value value = field.value();
        if (key == "operations")
            operations.read(value, true);
        else if (key == "requiredLeases")
            leases.read(value, true);
    }
    transaction_request out;
    std::size_t total_items = 0;
    const auto texts = operation_texts(body, parsers.at(1), operations);
    for (std::size_t i = 0; i < texts.size(); ++i) {
        try {
            auto op = parse_operation(body, parsers, texts[i], lim);
            total_items += op.type == transaction_op::kind::push ? op.items.size() : 1;
            out.operations.push_back(std::move(op));
        } catch (const api_error& e) {
            throw api_error(e.code(), fmt::format("operations[{}].{}", i, e.what()));
        }
    }
    if (total_items > lim.max_push_items)
        throw api_error(error_code::payload_too_large,
                        fmt::format("a transaction may carry at most {} items and acks", lim.max_push_items));
    if (!leases.absent_or_null()) {
        if (leases.type != json_type::array) throw bad_request("requiredLeases must be an array of lease ids");
        const json list = json::parse(leases.text);
        for (std::size_t i = 0; i < list.size(); ++i) {
            const json& l = list[i];
            auto uuid = l.is_string() ? segment::parse_uuid(l.get<std::string>()) : std::nullopt;
            if (!uuid) throw bad_request(fmt::format("requiredLeases[{}] must be a lease id (UUID)", i));
            out.required_leases.push_back(segment::uuid_to_string(*uuid));
        }
    }
    out.budget_share = body.take_budget_share();
    return out;
}

}  // namespace queen::api
