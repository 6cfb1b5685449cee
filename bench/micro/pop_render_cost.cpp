// What writing a pop answer costs the broker (api/delivery/pop_answer over render/json_writer): one
// raw segment of N messages decoded and rendered as a pop answer's message array, next to
// decoding alone and to copying the payload bytes alone (the least any renderer must do).
// Self-checking: every answer parses and gives back each payload and offset.
//   ./build/queen_pop_render_cost [ROUNDS]
#include "api/delivery/pop_answer.hpp"
#include "render/json_writer.hpp"
#include "segment/segment_codec.hpp"

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
using namespace queen;

std::string render_answer(const segment::decoded_segment& seg, std::size_t stored_bytes) {
    const api::pop_message_scope scope{42, "p7", "0190f5a8-0000-7000-8000-000000000000", "workers"};
    render::json_writer out(api::expected_pop_answer_bytes(stored_bytes));
    out.begin_array();
    std::int64_t offset = 1;
    for (const auto& f : seg.frames()) api::write_pop_message(out, scope, offset++, f, f.payload);
    return out.end_array().take();
}

void check(const std::string& answer, const segment::decoded_segment& seg) {
    const auto parsed = nlohmann::json::parse(answer);
    std::size_t i = 0;
    for (const auto& f : seg.frames()) {
        if (parsed.at(i).at("data") != nlohmann::json::parse(f.payload) ||
            parsed.at(i).at("offset") != static_cast<std::int64_t>(i + 1)) {
            fmt::print(stderr, "pop_render_cost: message {} rendered wrong\n", i);
            std::exit(1);
        }
        ++i;
    }
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
    fmt::print("{:>22} {:>12} {:>12} {:>12} {:>12} {:>14}\n", "segment", "answer B", "decode ns", "render ns",
               "copy ns", "render ns/msg");
    for (auto [count, bytes] : {std::pair{1, 200}, std::pair{100, 200}, std::pair{1000, 200}, std::pair{10, 100000}}) {
        std::vector<std::string> txids, payloads;
        for (int i = 0; i < count; ++i) {
            txids.push_back(fmt::format("tx-{}", i));
            payloads.push_back(fmt::format(R"({{"n":{},"s":"{}","tags":["a","b"]}})", i,
                                           std::string(static_cast<std::size_t>(bytes), 'x')));
        }
        std::vector<segment::frame_view> frames;
        for (int i = 0; i < count; ++i)
            frames.push_back({1764590000000000 + i, txids[i], std::nullopt, std::nullopt, payloads[i]});
        const std::string stored = segment::encode(frames, segment::codec::raw);
        const auto seg = segment::decoded_segment::decode(stored);
        const std::string answer = render_answer(seg, stored.size());
        check(answer, seg);

        std::size_t sink = 0;
        const double decode = median_ns(rounds, [&] { sink += segment::decoded_segment::decode(stored).frames().size(); });
        const double rendered = median_ns(rounds, [&] { sink += render_answer(seg, stored.size()).size(); });
        const double copied = median_ns(rounds, [&] {
            std::string out;
            out.reserve(answer.size());
            for (const auto& f : seg.frames()) out.append(f.payload);
            sink += out.size();
        });
        fmt::print("{:>22} {:>12} {:>12.0f} {:>12.0f} {:>12.0f} {:>14.0f}{}\n", fmt::format("{} × {} B", count, bytes),
                   answer.size(), decode, rendered, copied, rendered / count, sink ? "" : " ");
    }
    return 0;
}
