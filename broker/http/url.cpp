#include "http/url.hpp"

#include "util/hex_digit.hpp"

namespace queen::http {

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= s.size()) return std::nullopt;
            int hi = util::hex_digit_value(s[i + 1]);
            int lo = util::hex_digit_value(s[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out += ' ';
        } else {
            out += c;
        }
    }
    return out;
}

std::optional<parsed_target> parse_target(std::string_view target) {
    parsed_target out;
    auto qpos = target.find('?');
    std::string_view path = target.substr(0, qpos);
    std::string_view query = qpos == std::string_view::npos ? std::string_view{} : target.substr(qpos + 1);
    std::size_t start = 0;
    while (start <= path.size()) {
        auto slash = path.find('/', start);
        auto end = slash == std::string_view::npos ? path.size() : slash;
        if (end > start) out.segments.emplace_back(path.substr(start, end - start));
        if (slash == std::string_view::npos) break;
        start = slash + 1;
    }
    start = 0;
    while (start < query.size()) {
        auto amp = query.find('&', start);
        auto end = amp == std::string_view::npos ? query.size() : amp;
        auto pair = query.substr(start, end - start);
        if (!pair.empty()) {
            auto eq = pair.find('=');
            auto key = percent_decode(pair.substr(0, eq), true);
            auto value = eq == std::string_view::npos ? std::optional<std::string>("")
                                                      : percent_decode(pair.substr(eq + 1), true);
            if (!key || !value) return std::nullopt;
            out.query[*key] = *value;
        }
        if (amp == std::string_view::npos) break;
        start = amp + 1;
    }
    return out;
}

}  // namespace queen::http
