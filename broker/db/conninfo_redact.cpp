// Passwords out of what is shown: connection strings and the messages that quote them
// (db/conninfo.hpp). Free text is scanned, not parsed, so a message that holds a string in
// either form, or a server's error that quotes one, is covered too.
#include "db/conninfo.hpp"

#include <cctype>

namespace queen::db {

namespace {

constexpr std::string_view mask = "***";
constexpr std::string_view keyword = "password";

bool word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool space(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}

// Where the value that starts at `at` ends: after its closing quote when quoted (backslash
// escapes), else at white space, a quote, or in a URL's query at `&`.
std::size_t value_end(std::string_view text, std::size_t at, bool in_query) {
    if (at < text.size() && text[at] == '\'') {
        for (std::size_t i = at + 1; i < text.size(); ++i) {
            if (text[i] == '\\') {
                ++i;
            } else if (text[i] == '\'') {
                return i + 1;
            }
        }
        return text.size();
    }
    std::size_t i = at;
    while (i < text.size() && !space(text[i]) && text[i] != '"' && !(in_query && (text[i] == '&' || text[i] == '#')))
        ++i;
    return i;
}

// The `password = value` pairs masked; whether any was found in `found`.
std::string mask_keyword_values(std::string_view text, bool& found) {
    std::string out;
    std::size_t from = 0;
    for (std::size_t at = 0; at + keyword.size() <= text.size(); ++at) {
        if (text.compare(at, keyword.size(), keyword) != 0) continue;
        if (at > 0 && word_char(text[at - 1])) continue;
        std::size_t i = at + keyword.size();
        while (i < text.size() && space(text[i])) ++i;
        if (i >= text.size() || text[i] != '=') continue;
        ++i;
        while (i < text.size() && space(text[i]) && text[i] != '\n') ++i;
        const bool in_query = at > 0 && (text[at - 1] == '?' || text[at - 1] == '&');
        const std::size_t end = value_end(text, i, in_query);
        found = true;
        out.append(text.substr(from, i - from)).append(mask);
        from = end;
        at = end == 0 ? 0 : end - 1;
    }
    out.append(text.substr(from));
    return out;
}

// The password of each URL's user information (`scheme://user:secret@host`) masked.
std::string mask_url_passwords(std::string_view text, bool& found) {
    std::string out;
    std::size_t from = 0;
    for (std::size_t at = text.find("://"); at != std::string_view::npos; at = text.find("://", at + 3)) {
        const std::size_t start = at + 3;
        std::size_t end = start;
        while (end < text.size() && !space(text[end]) && text[end] != '/' && text[end] != '?' && text[end] != '#' &&
               text[end] != '\'' && text[end] != '"')
            ++end;
        const std::size_t at_sign = text.substr(start, end - start).rfind('@');
        if (at_sign == std::string_view::npos) continue;
        const std::size_t colon = text.substr(start, at_sign).find(':');
        if (colon == std::string_view::npos) continue;
        found = true;
        out.append(text.substr(from, start + colon + 1 - from)).append(mask);
        from = start + at_sign;
    }
    out.append(text.substr(from));
    return out;
}

}  // namespace

std::string redact_passwords(std::string_view text) {
    bool found = false;
    const std::string urls = mask_url_passwords(text, found);
    return mask_keyword_values(urls, found);
}

bool carries_password(std::string_view conninfo) {
    bool found = false;
    const std::string urls = mask_url_passwords(conninfo, found);
    mask_keyword_values(urls, found);
    return found;
}

}  // namespace queen::db
