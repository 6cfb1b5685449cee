#include "api/shared/push_request.hpp"

#include "api/shared/api_error.hpp"
#include "api/shared/requests.hpp"
#include "api/shared/validate.hpp"
#include "segment/segment_codec.hpp"

#include <fmt/core.h>

namespace queen::api {

namespace {

using simdjson::ondemand::json_type;

// The fields of one item, as its object last gave them.
struct item_fields {
    json_field queue, partition, transaction_id, trace_id, payload;
};

item_fields read_item_fields(simdjson::ondemand::object object) {
    item_fields f;
    for (auto member : object) {
        auto field = take(std::move(member));
        const std::string_view key = take(field.unescaped_key());
        simdjson::ondemand::value value = field.value();
        if (key == "queue")
            f.queue.read(value);
        else if (key == "partition")
            f.partition.read(value);
        else if (key == "transactionId")
            f.transaction_id.read(value);
        else if (key == "traceId")
            f.trace_id.read(value);
        else if (key == "payload")
            f.payload.read(value, true);
    }
    return f;
}

// An optional string field: absent or null is nullopt (docs/http-api.md, "Conventions").
std::optional<std::string> optional_string(const json_field& field, const std::string& what) {
    if (field.absent_or_null()) return std::nullopt;
    if (field.type != json_type::string) throw bad_request(what + " must be a string");
    check_no_nul(what, field.text);
    return std::string(field.text);
}

domain::push_item parse_item(simdjson::ondemand::value element, std::size_t index, const config::limits& lim,
                             bool& id_generated) {
    const std::string name = fmt::format("items[{}]", index);
    const std::string where = name + ".";
    if (take(element.type()) != json_type::object) throw bad_request(name + " must be an object");
    const item_fields f = read_item_fields(take(element.get_object()));
    domain::push_item item;
    if (f.queue.absent_or_null()) throw bad_request(where + "queue is required");
    if (f.queue.type != json_type::string) throw bad_request(where + "queue must be a string");
    item.queue = std::string(f.queue.text);
    check_name(where + "queue", item.queue, lim);
    item.partition = optional_string(f.partition, where + "partition").value_or("Default");
    check_name(where + "partition", item.partition, lim);
    if (auto tx = optional_string(f.transaction_id, where + "transactionId")) {
        check_name(where + "transactionId", *tx, lim);
        item.transaction_id = std::move(*tx);
        id_generated = false;
    } else {
        item.transaction_id = generate_uuid_v7();
        id_generated = true;
    }
    if (auto trace = optional_string(f.trace_id, where + "traceId")) {
        auto uuid = segment::parse_uuid(*trace);
        if (!uuid) throw bad_request(where + "traceId must be a UUID");
        item.trace_id = segment::uuid_to_string(*uuid);
    }
    if (f.payload.present) {
        check_payload_text_depth(f.payload.text, where + "payload", lim);
        item.payload = std::string(f.payload.text);
    } else {
        item.payload = "null";
    }
    return item;
}

}  // namespace

std::vector<domain::push_item> parse_push_items(const json_text_body& body, ondemand_parsers& parsers,
                                                std::size_t level, const json_field& items, const config::limits& lim,
                                                std::vector<bool>* ids_generated) {
    if (items.absent_or_null()) throw bad_request("items is required and must be an array");
    if (items.type != json_type::array)
        throw bad_request(fmt::format("items must be an array, got {}", json_type_name(items.type)));
    auto document = take(parsers.at(level).iterate(body.padded(items.text)));
    auto array = take(document.get_array());
    const std::size_t count = take(array.count_elements());
    if (count > lim.max_push_items)
        throw api_error(error_code::payload_too_large,
                        fmt::format("a push may carry at most {} items, got {}", lim.max_push_items, count));
    std::vector<domain::push_item> out;
    out.reserve(count);
    for (auto element : array) {
        bool generated = false;
        out.push_back(parse_item(take(std::move(element)), out.size(), lim, generated));
        if (ids_generated) ids_generated->push_back(generated);
    }
    return out;
}

push_request parse_push(std::string_view text, const config::limits& lim) {
    json_text_body body(text, lim, push_value_cost_bytes);
    ondemand_parsers parsers(body);
    auto document = take(parsers.at(0).iterate(body.padded(body.text())));
    if (take(document.type()) != json_type::object)
        throw bad_request("request body must be a JSON object with an items array");
    json_field items;
    for (auto member : take(document.get_object())) {
        auto field = take(std::move(member));
        if (take(field.unescaped_key()) != "items") continue;
        simdjson::ondemand::value value = field.value();
        items.read(value, true);
    }
    return {parse_push_items(body, parsers, 1, items, lim), body.take_budget_share()};
}

}  // namespace queen::api
