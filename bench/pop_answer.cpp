#include "pop_answer.hpp"

#include <simdjson.h>

#include <limits>
#include <string_view>

namespace queen::bench {

namespace {

// The string at obj[key], else fallback.
std::string string_field(simdjson::dom::object obj, std::string_view key, std::string_view fallback = {}) {
    std::string_view value;
    if (obj[key].get_string().get(value) != simdjson::SUCCESS) return std::string(fallback);
    return std::string(value);
}

// Fills seq / producer / sent_us when data is {"producer":u,"seq":u,"sentUs":i,…}.
void read_bench_payload(simdjson::dom::element data, popped_message& p) {
    simdjson::dom::object d;
    if (data.get_object().get(d) != simdjson::SUCCESS) return;
    std::uint64_t seq = 0, producer = 0;
    std::int64_t sent = 0;
    if (d["seq"].get_uint64().get(seq) != simdjson::SUCCESS ||
        d["producer"].get_uint64().get(producer) != simdjson::SUCCESS ||
        producer > std::numeric_limits<std::uint32_t>::max() ||
        d["sentUs"].get_int64().get(sent) != simdjson::SUCCESS)
        return;
    p.seq = seq;
    p.producer = static_cast<std::uint32_t>(producer);
    p.sent_us = sent;
    p.ours = true;
}

}  // namespace

bool parse_pop_answer(const std::string& body, std::vector<popped_message>& out) {
    // The load generator shares the machine with the broker and PostgreSQL: a DOM parse into
    // std::map would cost it more CPU than the broker spends rendering the answer.
    thread_local simdjson::dom::parser parser;
    out.clear();
    simdjson::dom::object answer;
    if (parser.parse(body).get_object().get(answer) != simdjson::SUCCESS) return false;
    simdjson::dom::array messages;
    if (answer["messages"].get_array().get(messages) != simdjson::SUCCESS) return false;
    const std::string top_lease = string_field(answer, "leaseId");
    out.reserve(messages.size());
    for (simdjson::dom::element e : messages) {
        popped_message p;
        simdjson::dom::object m;
        if (e.get_object().get(m) == simdjson::SUCCESS) {
            p.transaction_id = string_field(m, "transactionId");
            p.partition_id = string_field(m, "partitionId");
            p.partition = string_field(m, "partition");
            p.lease_id = string_field(m, "leaseId", top_lease);
            if (m["offset"].get_int64().get(p.offset) != simdjson::SUCCESS) p.offset = -1;
            simdjson::dom::element data;
            if (m["data"].get(data) == simdjson::SUCCESS) {
                p.data = simdjson::minify(data);
                read_bench_payload(data, p);
            }
        }
        out.push_back(std::move(p));
    }
    return true;
}

}  // namespace queen::bench
