#include "pop_answer.hpp"

namespace queen::bench {

using nlohmann::json;

namespace {

// The string at m[key], else fallback.
std::string string_field(const json& m, const char* key, const std::string& fallback = {}) {
    auto it = m.find(key);
    return it != m.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// Fills seq / producer / sent_us when data is {"producer":u,"seq":u,"sentUs":i,…}.
void read_bench_payload(popped_message& p) {
    const json& d = p.data;
    if (!d.is_object()) return;
    auto seq = d.find("seq"), producer = d.find("producer"), sent = d.find("sentUs");
    if (seq == d.end() || !seq->is_number_unsigned() || producer == d.end() || !producer->is_number_unsigned() ||
        sent == d.end() || !sent->is_number_integer())
        return;
    p.seq = seq->get<std::uint64_t>();
    p.producer = producer->get<std::uint32_t>();
    p.sent_us = sent->get<std::int64_t>();
    p.ours = true;
}

}  // namespace

bool parse_pop_answer(const std::string& body, std::vector<popped_message>& out) {
    out.clear();
    auto answer = json::parse(body, nullptr, false);
    if (answer.is_discarded() || !answer.is_object()) return false;
    auto messages = answer.find("messages");
    if (messages == answer.end() || !messages->is_array()) return false;
    const std::string top_lease = string_field(answer, "leaseId");
    out.reserve(messages->size());
    for (auto& m : *messages) {
        popped_message p;
        if (m.is_object()) {
            p.transaction_id = string_field(m, "transactionId");
            p.partition_id = string_field(m, "partitionId");
            p.partition = string_field(m, "partition");
            p.lease_id = string_field(m, "leaseId", top_lease);
            p.offset = m.value("offset", std::int64_t(-1));
            if (auto d = m.find("data"); d != m.end()) p.data = std::move(*d);
            read_bench_payload(p);
        }
        out.push_back(std::move(p));
    }
    return true;
}

}  // namespace queen::bench
