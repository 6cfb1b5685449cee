#include "api/streams/stream_requests.hpp"

#include "api/shared/json_body.hpp"
#include "api/shared/json_guard.hpp"
#include "api/shared/push_request.hpp"
#include "segment/segment_codec.hpp"

#include <fmt/core.h>

namespace queen::api {

using nlohmann::json;
using simdjson::ondemand::json_type;

namespace {

// A required non-empty string field of a registration or state body.
std::string required_string(const json& body, const char* key) {
    const json* v = present_field(body, key);
    if (!v || !v->is_string() || v->get_ref<const std::string&>().empty())
        throw bad_request(fmt::format("{} is required", key));
    check_no_nul(key, v->get_ref<const std::string&>());
    return v->get<std::string>();
}

// A stream query id: a UUID in canonical form.
std::string required_query_id(const json& body) {
    const json* v = present_field(body, "query_id");
    if (!v || !v->is_string()) throw bad_request("query_id is required and must be a string");
    auto uuid = segment::parse_uuid(v->get_ref<const std::string&>());
    if (!uuid) throw bad_request("query_id must be a UUID (as POST /streams/v1/queries returns it)");
    return segment::uuid_to_string(*uuid);
}

void check_state_key(const std::string& what, std::string_view key, const limits& lim) {
    check_no_nul(what, key);
    if (key.size() > lim.max_stream_key_bytes)
        throw bad_request(
            fmt::format("{} is {} bytes; a state key holds at most {}", what, key.size(), lim.max_stream_key_bytes));
}

// state_ops[i]: {type: "upsert", key, value} or {type: "delete", key}.
domain::stream_state_op parse_state_op(const json_text_body& body, simdjson::ondemand::parser& parser,
                                       std::string_view text, std::size_t index, const limits& lim) {
    const std::string name = fmt::format("state_ops[{}]", index);
    json_field type, key, value;
    auto document = take(parser.iterate(body.padded(text)));
    for (auto member : take(document.get_object())) {
        auto field = take(std::move(member));
        const std::string_view k = take(field.unescaped_key());
        simdjson::ondemand::value v = field.value();
        if (k == "type")
            type.read(v);
        else if (k == "key")
            key.read(v);
        else if (k == "value")
            value.read(v, true);
    }
    domain::stream_state_op op;
    if (!type.present || type.type != json_type::string || (type.text != "upsert" && type.text != "delete"))
        throw bad_request(name + ".type must be \"upsert\" or \"delete\"");
    op.upsert = type.text == "upsert";
    if (!key.present || key.type != json_type::string)
        throw bad_request(name + ".key is required and must be a string");
    op.key = std::string(key.text);
    check_state_key(name + ".key", op.key, lim);
    if (op.upsert) {
        if (!value.present) throw bad_request(name + ".value is required for an upsert");
        check_payload_text_depth(value.text, name + ".value", lim);
        if (json_text_holds_nul(value.text))
            throw bad_request(name + ".value must not contain \\u0000 (state is stored as jsonb)");
        op.value = std::string(value.text);
    }
    return op;
}

std::vector<domain::stream_state_op> parse_state_ops(const json_text_body& body, ondemand_parsers& parsers,
                                                     const json_field& ops, const limits& lim) {
    std::vector<domain::stream_state_op> out;
    if (ops.absent_or_null()) return out;
    if (ops.type != json_type::array) throw bad_request("state_ops must be an array");
    std::vector<std::string_view> texts;
    auto document = take(parsers.at(1).iterate(body.padded(ops.text)));
    for (auto element : take(document.get_array())) {
        simdjson::ondemand::value op = take(std::move(element));
        if (take(op.type()) != json_type::object)
            throw bad_request(fmt::format("state_ops[{}] must be an object", texts.size()));
        texts.push_back(raw_json_of(op));
    }
    for (std::size_t i = 0; i < texts.size(); ++i) out.push_back(parse_state_op(body, parsers.at(2), texts[i], i, lim));
    return out;
}

// A lease id as the database compares it: one that is no UUID names no lease.
std::string lease_of(std::string_view text) {
    auto uuid = segment::parse_uuid(text);
    return uuid ? segment::uuid_to_string(*uuid) : "00000000-0000-0000-0000-000000000000";
}

// The cycle's lease: ack.leaseId, or the top-level lease_id. A cycle without an ack that names
// a lease applies only while that lease is live (a late one cannot overwrite newer state); one
// that names none is Queen's SDKs' idle flush (`ack: null`, no lease), applied as sent
// (docs/streams.md, "Late and replayed cycles").
void resolve_cycle_lease(domain::stream_cycle_call& call, const json_field& lease) {
    if (!lease.absent_or_null()) {
        if (lease.type != json_type::string) throw bad_request("lease_id must be a string");
        call.lease_id = lease_of(lease.text);
    }
    if (call.ack) {
        if (call.lease_id && call.ack->lease_id && *call.lease_id != *call.ack->lease_id)
            throw bad_request("lease_id and ack.leaseId name different leases");
        if (!call.ack->lease_id) call.ack->lease_id = call.lease_id;
        call.lease_id.reset();
    }
}

// ack: {transactionId, leaseId?, status?, count?, error?}.
domain::stream_cycle_ack parse_cycle_ack(std::string_view text, std::size_t& count) {
    const json a = json::parse(text);
    if (!a.is_object()) throw bad_request("ack must be an object or null");
    domain::stream_cycle_ack out;
    const json* tx = present_field(a, "transactionId");
    if (!tx || !tx->is_string() || tx->get_ref<const std::string&>().empty())
        throw bad_request("ack.transactionId is required");
    out.transaction_id = tx->get<std::string>();
    check_no_nul("ack.transactionId", out.transaction_id);
    if (const json* lease = present_field(a, "leaseId")) {
        if (!lease->is_string()) throw bad_request("ack.leaseId must be a string");
        out.lease_id = lease_of(lease->get_ref<const std::string&>());
    }
    std::string status = "completed";
    if (const json* st = present_field(a, "status")) {
        if (!st->is_string()) throw bad_request("ack.status must be a string");
        status = st->get<std::string>();
    }
    if (status == "failed" || status == "dlq")
        out.dead_letter = true;
    else if (status != "completed" && status != "success")
        throw bad_request(fmt::format("ack.status '{}' is unknown; use completed, success, failed or dlq", status));
    if (const json* e = present_field(a, "error")) {
        if (!e->is_string()) throw bad_request("ack.error must be a string");
        out.error = e->get<std::string>();
        check_no_nul("ack.error", *out.error);
    }
    if (out.dead_letter && !out.error) out.error = "Streaming cycle reported failure";
    count = 1;
    if (const json* c = present_field(a, "count"))
        count = static_cast<std::size_t>(json_integer(*c, "ack.count", 0, 1'000'000'000));
    return out;
}

// The parts of a cycle whose errors fail the cycle rather than the request.
void parse_cycle_operations(stream_cycle_request& out, const json_text_body& body, ondemand_parsers& parsers,
                            const json_field& group, const json_field& ops, const json_field& items,
                            const json_field& ack, const json_field& release, const json_field& lease,
                            const limits& lim) {
    auto& call = out.call;
    call.consumer_group = queue_mode_group;
    if (!group.absent_or_null()) {
        if (group.type != json_type::string) throw bad_request("consumer_group must be a string");
        if (!group.text.empty()) {
            call.consumer_group = std::string(group.text);
            check_name("consumer_group", call.consumer_group, lim);
        }
    }
    if (!release.absent_or_null()) {
        if (release.type != json_type::boolean) throw bad_request("release_lease must be a boolean");
        call.release_lease = release.text == "true";
    }
    call.state_ops = parse_state_ops(body, parsers, ops, lim);
    if (!items.absent_or_null()) {
        try {
            call.push_items = parse_push_items(body, parsers, 1, items, lim, &call.derive_transaction_id);
        } catch (const api_error& e) {
            if (e.code() != error_code::bad_request) throw;
            throw bad_request(std::string("push_") + e.what());
        }
    }
    if (call.state_ops.size() + call.push_items.size() > lim.max_push_items)
        throw api_error(error_code::payload_too_large,
                        fmt::format("a cycle may carry at most {} state ops and push items", lim.max_push_items));
    if (!ack.absent_or_null()) {
        if (ack.type != json_type::object) throw bad_request("ack must be an object or null");
        call.ack = parse_cycle_ack(ack.text, out.ack_count);
    }
    resolve_cycle_lease(call, lease);
}

}  // namespace

stream_register_request parse_stream_register(std::string_view text, const limits& lim) {
    const auto doc = parse_json_body(text, lim);
    const json& body = doc.value;
    if (!body.is_object()) throw bad_request("request body must be a JSON object");
    stream_register_request out;
    out.name = required_string(body, "name");
    check_name("name", out.name, lim);
    out.source_queue = required_string(body, "source_queue");
    check_name("source_queue", out.source_queue, lim);
    out.config_hash = required_string(body, "config_hash");
    if (const json* sink = present_field(body, "sink_queue")) {
        if (!sink->is_string()) throw bad_request("sink_queue must be a string or null");
        // An empty sink_queue names no queue: a query without a sink, as null.
        if (!sink->get_ref<const std::string&>().empty()) {
            out.sink_queue = sink->get<std::string>();
            check_name("sink_queue", *out.sink_queue, lim);
        }
    }
    if (const json* reset = present_field(body, "reset")) {
        if (!reset->is_boolean()) throw bad_request("reset must be a boolean");
        out.reset = reset->get<bool>();
    }
    return out;
}

stream_state_request parse_stream_state_get(std::string_view text, const limits& lim) {
    const auto doc = parse_json_body(text, lim);
    const json& body = doc.value;
    if (!body.is_object()) throw bad_request("request body must be a JSON object");
    stream_state_request out;
    out.query_id = required_query_id(body);
    const json* pid = present_field(body, "partition_id");
    if (!pid || !pid->is_string()) throw bad_request("partition_id is required and must be a string");
    out.partition_id = parse_partition_id(pid->get_ref<const std::string&>());
    if (const json* keys = present_field(body, "keys")) {
        if (!keys->is_array()) throw bad_request("keys must be an array of strings");
        if (keys->size() > lim.max_stream_state_keys)
            throw api_error(error_code::payload_too_large,
                            fmt::format("keys may list at most {} keys", lim.max_stream_state_keys));
        for (std::size_t i = 0; i < keys->size(); ++i) {
            const json& k = (*keys)[i];
            if (!k.is_string()) throw bad_request(fmt::format("keys[{}] must be a string", i));
            check_state_key(fmt::format("keys[{}]", i), k.get_ref<const std::string&>(), lim);
            out.filter.keys.push_back(k.get<std::string>());
        }
    }
    if (const json* prefix = present_field(body, "key_prefix")) {
        if (!prefix->is_string()) throw bad_request("key_prefix must be a string");
        check_state_key("key_prefix", prefix->get_ref<const std::string&>(), lim);
        out.filter.key_prefix = prefix->get<std::string>();
    }
    if (const json* ripe = present_field(body, "ripe_at_or_before")) {
        if (!ripe->is_number()) throw bad_request("ripe_at_or_before must be a number (epoch milliseconds)");
        out.filter.ripe_at_or_before = ripe->dump();
    }
    return out;
}

stream_cycle_request parse_stream_cycle(std::string_view text, const limits& lim) {
    json_text_body body(text, lim, push_value_cost_bytes);
    ondemand_parsers parsers(body);
    auto document = take(parsers.at(0).iterate(body.padded(body.text())));
    if (take(document.type()) != json_type::object) throw bad_request("request body must be a JSON object");
    json_field query, partition, group, ops, items, ack, release, lease;
    for (auto member : take(document.get_object())) {
        auto field = take(std::move(member));
        const std::string_view key = take(field.unescaped_key());
        simdjson::ondemand::value value = field.value();
        if (key == "query_id")
            query.read(value);
        else if (key == "partition_id")
            partition.read(value);
        else if (key == "consumer_group")
            group.read(value);
        else if (key == "state_ops")
            ops.read(value, true);
        else if (key == "push_items")
            items.read(value, true);
        else if (key == "ack")
            ack.read(value, true);
        else if (key == "release_lease")
            release.read(value, true);
        else if (key == "lease_id")
            lease.read(value);
    }
    if (query.absent_or_null() || query.type != json_type::string)
        throw bad_request("query_id is required and must be a string");
    if (partition.absent_or_null() || partition.type != json_type::string)
        throw bad_request("partition_id is required and must be a string");
    stream_cycle_request out;
    out.query_id = std::string(query.text);
    out.partition_id = std::string(partition.text);
    check_no_nul("query_id", out.query_id);
    check_no_nul("partition_id", out.partition_id);
    const std::string group_text(group.text);  // the walk's parser reuses its buffer for later documents
    json_field own_group = group;
    own_group.text = group_text;
    const std::string lease_text(lease.text);
    json_field own_lease = lease;
    own_lease.text = lease_text;
    try {
        auto uuid = segment::parse_uuid(out.query_id);
        if (!uuid) throw bad_request(fmt::format("unknown query {}", out.query_id));
        out.call.query_id = segment::uuid_to_string(*uuid);
        auto pid = parse_partition_id(out.partition_id);
        if (!pid)
            throw bad_request(fmt::format("partition {} is not a partition of the source queue", out.partition_id));
        out.call.partition_id = *pid;
        parse_cycle_operations(out, body, parsers, own_group, ops, items, ack, release, own_lease, lim);
    } catch (const api_error& e) {
        if (e.code() != error_code::bad_request) throw;
        out.refusal = e.what();
    }
    out.budget_share = body.take_budget_share();
    return out;
}

}  // namespace queen::api
