#include "api/shared/transaction_request.hpp"

#include "segment/segment_codec.hpp"

#include <fmt/core.h>

namespace queen::api {

using nlohmann::json;

transaction_request parse_transaction(const json& body, const limits& lim) {
    if (!body.is_object()) throw bad_request("request body must be a JSON object with an operations array");
    auto ops = body.find("operations");
    if (ops == body.end() || !ops->is_array() || ops->empty())
        throw bad_request("operations must be a non-empty array");
    transaction_request out;
    std::size_t total_items = 0;
    for (std::size_t i = 0; i < ops->size(); ++i) {
        const json& op = (*ops)[i];
        const std::string where = fmt::format("operations[{}]", i);
        if (!op.is_object()) throw bad_request(where + " must be an object");
        auto type = op.find("type");
        if (type == op.end() || !type->is_string() || (*type != "push" && *type != "ack"))
            throw bad_request(where + ".type must be \"push\" or \"ack\"");
        transaction_op parsed;
        try {
            if (*type == "push") {
                parsed.type = transaction_op::kind::push;
                auto items = op.find("items");
                json wrapper{{"items", items == op.end() ? json() : *items}};
                parsed.items = parse_push(wrapper, lim);
                total_items += parsed.items.size();
            } else {
                parsed.type = transaction_op::kind::ack;
                parsed.ack = parse_ack(op, lim);
                ++total_items;
            }
        } catch (const api_error& e) {
            throw api_error(e.code(), where + "." + e.what());
        }
        out.operations.push_back(std::move(parsed));
    }
    if (total_items > lim.max_push_items)
        throw api_error(error_code::payload_too_large,
                        fmt::format("a transaction may carry at most {} items and acks", lim.max_push_items));
    auto leases = body.find("requiredLeases");
    if (leases != body.end() && !leases->is_null()) {
        if (!leases->is_array()) throw bad_request("requiredLeases must be an array of lease ids");
        for (std::size_t i = 0; i < leases->size(); ++i) {
            const json& l = (*leases)[i];
            auto uuid = l.is_string() ? segment::parse_uuid(l.get<std::string>()) : std::nullopt;
            if (!uuid) throw bad_request(fmt::format("requiredLeases[{}] must be a lease id (UUID)", i));
            out.required_leases.push_back(segment::uuid_to_string(*uuid));
        }
    }
    return out;
}

}  // namespace queen::api
