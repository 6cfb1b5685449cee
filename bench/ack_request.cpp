#include "ack_request.hpp"

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include <set>

namespace queen::bench {

using nlohmann::json;

namespace {

// Appends one acknowledgment object for m with the given status.
void append_ack(std::string& body, const popped_message& m, const char* status) {
    body += "{\"transactionId\":" + json(m.transaction_id).dump() + ",\"partitionId\":" + json(m.partition_id).dump() +
            ",\"leaseId\":" + json(m.lease_id).dump() + ",\"status\":\"" + status + "\"}";
}

// The body up to the opening '[' of acknowledgments (with consumerGroup unless queue mode).
std::string open_body(const std::string& group) {
    std::string body = "{";
    if (!group.empty()) body += "\"consumerGroup\":" + json(group).dump() + ",";
    body += "\"acknowledgments\":[";
    return body;
}

}  // namespace

std::string ack_batch_body(const std::string& group, const std::vector<popped_message>& batch, const char* status) {
    std::string body = open_body(group);
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (i) body += ',';
        append_ack(body, batch[i], status);
    }
    body += "]}";
    return body;
}

std::string release_body(const std::string& group, const std::vector<popped_message>& batch) {
    std::string body = open_body(group);
    std::set<std::string> seen;
    for (const auto& m : batch) {
        if (!seen.insert(m.partition_id).second) continue;
        if (seen.size() > 1) body += ',';
        append_ack(body, m, "retry");
    }
    body += "]}";
    return body;
}

std::size_t distinct_partitions(const std::vector<popped_message>& batch) {
    std::set<std::string> seen;
    for (const auto& m : batch) seen.insert(m.partition_id);
    return seen.size();
}

ack_outcome check_ack_answer(const std::string& body, std::size_t count) {
    thread_local simdjson::dom::parser parser;
    ack_outcome out;
    simdjson::dom::array answers;
    if (parser.parse(body).get_array().get(answers) != simdjson::SUCCESS || answers.size() != count) {
        out.failures = count;
        out.first_failure = body.substr(0, 300);
        return out;
    }
    out.well_formed = true;
    for (simdjson::dom::element a : answers) {
        bool success = false, noop = false;
        simdjson::dom::object obj;
        const bool is_object = a.get_object().get(obj) == simdjson::SUCCESS;
        if (is_object && obj["success"].get_bool().get(success) != simdjson::SUCCESS) success = false;
        if (!is_object || !success) {
            if (out.failures++ == 0) out.first_failure = simdjson::minify(a);
        } else if (obj["noop"].get_bool().get(noop) == simdjson::SUCCESS && noop) {
            ++out.noops;
        }
    }
    return out;
}

}  // namespace queen::bench
