// What reading a push body costs the broker before the database: the same push bodies through
// check_json_text alone (the scan every body passes), nlohmann's document with each payload
// re-serialized (how payloads were read before they were kept as sent), and parse_push (the
// scan, simdjson's check and the On-Demand walk that keeps each payload's bytes).
// Self-checking: both ways must read the same item count.
//   ./build/queen_json_guard_cost [ROUNDS]
#include "api/shared/json_guard.hpp"
#include "api/shared/push_request.hpp"

#include "median_ns.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

using queen::bench::micro::median_ns;

// A push of `items` items whose payloads are objects of about `payload_bytes` bytes.
std::string push_body(int items, int payload_bytes) {
    std::string body = "{\"items\":[";
    for (int i = 0; i < items; ++i) {
        if (i) body += ',';
        body += fmt::format(R"({{"queue":"bench","partition":"p{}","transactionId":"tx-{}","payload":{{"n":{},"s":"{}","tags":["a","b"]}}}})",
                            i % 100, i, i, std::string(static_cast<std::size_t>(payload_bytes), 'x'));
    }
    return body + "]}";
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
    const queen::config::limits lim{.max_payload_depth = 1000};
    fmt::print("{:>28} {:>10} {:>12} {:>14} {:>14} {:>8}\n", "body", "bytes", "scan ns", "DOM+dump ns", "push parse ns",
               "ratio");
    for (auto [items, bytes] : {std::pair{1, 200}, std::pair{100, 200}, std::pair{1000, 200}, std::pair{10, 100000}}) {
        const std::string body = push_body(items, bytes);
        std::size_t dom_items = 0;
        std::size_t parsed_items = 0;
        const double scan = median_ns(rounds, [&] { queen::api::check_json_text(body, lim.max_payload_depth); });
        const double dom = median_ns(rounds, [&] {
            const auto document = nlohmann::json::parse(body);
            std::vector<std::string> payloads;
            for (const auto& item : document["items"]) payloads.push_back(item["payload"].dump());
            dom_items = payloads.size();
        });
        const double push = median_ns(rounds, [&] { parsed_items = queen::api::parse_push(body, lim).items.size(); });
        if (parsed_items != static_cast<std::size_t>(items) || dom_items != parsed_items) {
            fmt::print(stderr, "self-check failed: {} and {} items read, {} expected\n", dom_items, parsed_items, items);
            return 1;
        }
        fmt::print("{:>28} {:>10} {:>12.0f} {:>14.0f} {:>14.0f} {:>7.2f}x\n",
                   fmt::format("{} items x {} B", items, bytes), body.size(), scan, dom, push, dom / push);
    }
    return 0;
}
