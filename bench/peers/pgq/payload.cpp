#include "payload.hpp"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <iterator>

namespace pgq_bench {

std::int64_t wall_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void append_payload(std::string& out, std::uint32_t producer, std::uint64_t seq, std::int64_t sent_us,
                    std::size_t payload_bytes) {
    const auto start = out.size();
    fmt::format_to(std::back_inserter(out), R"({{"producer":{},"seq":{},"sentUs":{},"pad":")", producer, seq, sent_us);
    const std::size_t so_far = out.size() - start + 2;  // + the closing "}
    if (payload_bytes > so_far) out.append(payload_bytes - so_far, 'x');
    out += "\"}";
}

void build_payload_array(std::string& out, std::uint32_t producer, std::uint64_t first, std::uint64_t n,
                         std::size_t payload_bytes) {
    out.clear();
    out.reserve(n * (payload_bytes + 16) + 2);
    std::string one;
    const std::int64_t sent = wall_us();
    out += '{';
    for (std::uint64_t seq = first; seq < first + n; ++seq) {
        if (seq != first) out += ',';
        one.clear();
        append_payload(one, producer, seq, sent, payload_bytes);
        out += '"';
        for (char c : one) {
            if (c == '"' || c == '\\') out += '\\';
            out += c;
        }
        out += '"';
    }
    out += '}';
}

namespace {

// The unsigned number right after `key` in `p` (searched from `from`); `from` moves past it.
template <class T>
std::optional<T> number_after(std::string_view p, std::string_view key, std::size_t& from) {
    const auto at = p.find(key, from);
    if (at == std::string_view::npos) return std::nullopt;
    const char* begin = p.data() + at + key.size();
    T v{};
    auto [ptr, ec] = std::from_chars(begin, p.data() + p.size(), v);
    if (ec != std::errc{} || ptr == begin) return std::nullopt;
    from = static_cast<std::size_t>(ptr - p.data());
    return v;
}

}  // namespace

std::optional<payload_ids> parse_payload(std::string_view p) {
    if (p.substr(0, 12) != R"({"producer":)") return std::nullopt;
    std::size_t pos = 0;
    auto producer = number_after<std::uint32_t>(p, R"({"producer":)", pos);
    if (!producer) return std::nullopt;
    auto seq = number_after<std::uint64_t>(p, R"(,"seq":)", pos);
    if (!seq || p.find(R"(,"sentUs":)", pos) != pos) return std::nullopt;
    return payload_ids{*producer, *seq};
}

}  // namespace pgq_bench
