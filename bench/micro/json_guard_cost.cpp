// What the body scan before parsing (api/json_guard) costs next to the parse it protects:
// the same push bodies through check_json_text alone, nlohmann::json::parse alone, and
// parse_json_body + parse_push (what a push costs the broker before the database).
// Self-checking: every body must pass the scan and parse to the same item count.
//   ./build/queen_json_guard_cost [ROUNDS]
#include "api/shared/json_guard.hpp"
#include "api/shared/requests.hpp"

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
    const queen::api::limits lim{.max_payload_depth = 1000};
    fmt::print("{:>28} {:>10} {:>12} {:>12} {:>14} {:>8}\n", "body", "bytes", "scan ns", "parse ns", "push parse ns",
               "scan %");
    for (auto [items, bytes] : {std::pair{1, 200}, std::pair{100, 200}, std::pair{1000, 200}, std::pair{10, 100000}}) {
        const std::string body = push_body(items, bytes);
        std::size_t parsed_items = 0;
        const double scan = median_ns(rounds, [&] { queen::api::check_json_text(body, lim.max_payload_depth); });
        const double parse = median_ns(rounds, [&] { parsed_items = nlohmann::json::parse(body)["items"].size(); });
        const double push = median_ns(rounds, [&] {
            parsed_items = queen::api::parse_push(queen::api::parse_json_body(body, lim).value, lim).size();
        });
        if (parsed_items != static_cast<std::size_t>(items)) {
            fmt::print(stderr, "self-check failed: {} items parsed, {} expected\n", parsed_items, items);
            return 1;
        }
        fmt::print("{:>28} {:>10} {:>12.0f} {:>12.0f} {:>14.0f} {:>7.1f}%\n",
                   fmt::format("{} items x {} B", items, bytes), body.size(), scan, parse, push, 100.0 * scan / push);
    }
    return 0;
}
