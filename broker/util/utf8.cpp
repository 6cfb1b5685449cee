#include "util/utf8.hpp"

#include <fmt/core.h>

namespace queen::util {

std::size_t utf8_sequence_length(std::string_view text, std::size_t at) noexcept {
    auto byte = [&](std::size_t i) -> unsigned {
        return at + i < text.size() ? static_cast<unsigned char>(text[at + i]) : 0u;
    };
    auto cont = [&](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) {
        const unsigned b = byte(i);
        return b >= lo && b <= hi;
    };
    if (at >= text.size()) return 0;
    const unsigned lead = byte(0);
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) return cont(1) ? 2 : 0;
    if (lead == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
    if (lead == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
    if (lead >= 0xE1 && lead <= 0xEF) return cont(1) && cont(2) ? 3 : 0;
    if (lead == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
    if (lead >= 0xF1 && lead <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
    if (lead == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
    return 0;
}

std::optional<std::size_t> first_invalid_utf8(std::string_view text) noexcept {
    std::size_t i = 0;
    while (i < text.size()) {
        if (static_cast<unsigned char>(text[i]) < 0x80) {
            ++i;
            continue;
        }
        const std::size_t n = utf8_sequence_length(text, i);
        if (n == 0) return i;
        i += n;
    }
    return std::nullopt;
}

std::string printable_echo(std::string_view text, std::size_t max_bytes) {
    static constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        std::string_view piece;
        std::string escaped;
        std::size_t consumed = 1;
        if (c < 0x20 || c == 0x7F) {
            escaped = fmt::format("\\x{:02x}", c);
            piece = escaped;
        } else if (c < 0x80) {
            piece = text.substr(i, 1);
        } else if (const std::size_t n = utf8_sequence_length(text, i); n > 0) {
            piece = text.substr(i, n);
            consumed = n;
        } else {
            piece = replacement;
        }
        if (out.size() + piece.size() > max_bytes) {
            out += "\xE2\x80\xA6";  // …
            return out;
        }
        out += piece;
        i += consumed;
    }
    return out;
}

}  // namespace queen::util
