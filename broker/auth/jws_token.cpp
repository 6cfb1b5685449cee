#include "auth/jws_token.hpp"

#include "auth/base64url.hpp"

namespace queen::auth {

namespace {

// Nesting allowed in a token's header or claims; real tokens nest two or three levels.
constexpr int max_json_depth = 16;

// True when `text` nests arrays and objects no deeper than max_json_depth (a linear scan, so
// that the parser never meets deep input).
bool shallow(std::string_view text) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_json_depth) return false;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return true;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

std::optional<nlohmann::json> decode_json_part(std::string_view part) {
    auto text = base64url_decode(part);
    if (!text || !shallow(*text)) return std::nullopt;
    auto doc = nlohmann::json::parse(*text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
    return doc;
}

std::optional<jws_token> split_token(std::string_view token) {
    if (token.empty() || token.size() > max_token_bytes) return std::nullopt;
    const auto first = token.find('.');
    if (first == std::string_view::npos) return std::nullopt;
    const auto second = token.find('.', first + 1);
    if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) return std::nullopt;
    auto header = decode_json_part(token.substr(0, first));
    auto signature = base64url_decode(token.substr(second + 1));
    if (!header || !signature) return std::nullopt;
    jws_token out;
    out.header = std::move(*header);
    out.payload_b64 = token.substr(first + 1, second - first - 1);
    out.signing_input = token.substr(0, second);
    out.signature = std::move(*signature);
    return out;
}

std::string_view token_of_header(std::string_view authorization) {
    const std::string_view value = trim(authorization);
    constexpr std::string_view scheme = "bearer";
    if (value.size() < scheme.size()) return value;
    for (std::size_t i = 0; i < scheme.size(); ++i) {
        const char c = value[i];
        if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != scheme[i]) return value;
    }
    // "Bearer" alone carries no token; "Bearer<blank>token" carries one; "Bearerx" is a token.
    if (value.size() == scheme.size()) return {};
    if (value[scheme.size()] != ' ' && value[scheme.size()] != '\t') return value;
    return trim(value.substr(scheme.size()));
}

}  // namespace queen::auth
