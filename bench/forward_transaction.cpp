#include "forward_transaction.hpp"

#include <nlohmann/json.hpp>

namespace queen::bench {

using nlohmann::json;

std::string original_transaction_id(const std::string& transaction_id, std::size_t stage) {
    if (stage == 0) return transaction_id;
    const std::string suffix = "-s" + std::to_string(stage);
    if (transaction_id.size() > suffix.size() &&
        transaction_id.compare(transaction_id.size() - suffix.size(), suffix.size(), suffix) == 0)
        return transaction_id.substr(0, transaction_id.size() - suffix.size());
    return transaction_id;
}

namespace {

// Appends one ack operation (completed) for transaction_id within m's partition and lease.
void append_ack(std::string& body, const std::string& transaction_id, const popped_message& m) {
    body += "{\"type\":\"ack\",\"transactionId\":" + json(transaction_id).dump() +
            ",\"partitionId\":" + json(m.partition_id).dump() + ",\"leaseId\":" + json(m.lease_id).dump() +
            ",\"status\":\"completed\"}";
}

// The string at r[key], else "" (also when r is not an object).
std::string string_field(const json& r, const char* key) {
    if (!r.is_object()) return {};
    auto it = r.find(key);
    return it != r.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string forward_body(const std::vector<popped_message>& batch, std::size_t stage, const std::string& next_queue,
                         bool poison) {
    const std::string queue_json = json(next_queue).dump();
    const std::string suffix = "-s" + std::to_string(stage + 1);
    std::string body;
    body.reserve(batch.size() * 400 + 64);
    body += "{\"operations\":[{\"type\":\"push\",\"items\":[";
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const auto& m = batch[i];
        if (i) body += ',';
        body += "{\"queue\":" + queue_json + ",\"partition\":" + json(m.partition).dump() +
                ",\"transactionId\":" + json(original_transaction_id(m.transaction_id, stage) + suffix).dump() +
                ",\"payload\":" + (m.data.empty() ? std::string("null") : m.data) + "}";
    }
    body += "]}";
    for (const auto& m : batch) {
        body += ',';
        append_ack(body, m.transaction_id, m);
    }
    if (poison && !batch.empty()) {
        body += ',';
        append_ack(body, "queen-bench-injected-failure", batch.front());
    }
    body += "]}";
    return body;
}

forward_outcome check_forward_answer(const std::string& body) {
    forward_outcome out;
    auto answer = json::parse(body, nullptr, false);
    if (answer.is_discarded() || !answer.is_object()) return out;
    auto success = answer.find("success");
    auto results = answer.find("results");
    if (success == answer.end() || !success->is_boolean() || results == answer.end() || !results->is_array())
        return out;
    out.well_formed = true;
    out.success = success->get<bool>();
    if (!out.success) {
        auto e = answer.find("error");
        out.error = e != answer.end() && e->is_string() ? e->get<std::string>() : std::string("(no error given)");
        return out;
    }
    for (const auto& r : *results) {
        if (string_field(r, "type") != "push") continue;
        const std::string status = string_field(r, "status");
        if (status == "queued") ++out.queued;
        else if (status == "duplicate") ++out.duplicates;
        else ++out.other;
    }
    return out;
}

}  // namespace queen::bench
