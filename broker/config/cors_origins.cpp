#include "config/cors_origins.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace queen::config {

namespace {

std::string trimmed(const std::string& s) {
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string::npos) return {};
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// scheme://host[:port] with a host of letters, digits, '-', '.', or a bracketed IPv6 address.
bool is_origin(const std::string& o) {
    std::string rest;
    if (o.rfind("http://", 0) == 0)
        rest = o.substr(7);
    else if (o.rfind("https://", 0) == 0)
        rest = o.substr(8);
    else
        return false;
    if (rest.empty()) return false;
    std::size_t host_end = 0;
    if (rest.front() == '[') {
        host_end = rest.find(']');
        if (host_end == std::string::npos || host_end == 1) return false;
        ++host_end;
    } else {
        host_end = rest.find(':');
        if (host_end == std::string::npos) host_end = rest.size();
        if (host_end == 0) return false;
        for (std::size_t i = 0; i < host_end; ++i) {
            const auto c = static_cast<unsigned char>(rest[i]);
            if (!std::isalnum(c) && c != '-' && c != '.') return false;
        }
    }
    if (host_end == rest.size()) return true;
    if (rest[host_end] != ':' || host_end + 1 == rest.size() || rest.size() - host_end - 1 > 5) return false;
    return std::all_of(rest.begin() + static_cast<std::ptrdiff_t>(host_end) + 1, rest.end(),
                       [](unsigned char c) { return std::isdigit(c) != 0; });
}

// A host name: letters, digits, '-' and '.', not empty.
bool is_host_name(const std::string& h) {
    return !h.empty() && std::all_of(h.begin(), h.end(),
                                     [](unsigned char c) { return std::isalnum(c) != 0 || c == '-' || c == '.'; });
}

// The lower-cased, distinct entries of a comma-separated `value`, each `*` (alone) or passing
// `valid`; `noun` names an entry and `what` its form in the errors.
std::vector<std::string> parse_list(const std::string& value, const char* setting, bool (*valid)(const std::string&),
                                    const char* noun, const char* what) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= value.size()) {
        const auto comma = std::min(value.find(',', start), value.size());
        std::string entry = trimmed(value.substr(start, comma - start));
        start = comma + 1;
        if (entry.empty()) continue;
        std::transform(entry.begin(), entry.end(), entry.begin(), [](unsigned char c) { return std::tolower(c); });
        if (entry != "*" && !valid(entry))
            throw std::invalid_argument(std::string(setting) + ": '" + entry + "' is not " + what + " or *");
        if (std::find(out.begin(), out.end(), entry) == out.end()) out.push_back(entry);
    }
    if (out.size() > 1 && std::find(out.begin(), out.end(), "*") != out.end())
        throw std::invalid_argument(std::string(setting) + ": * allows every " + noun +
                                    " and cannot be listed with others");
    return out;
}

}  // namespace

std::vector<std::string> parse_cors_origins(const std::string& value) {
    return parse_list(value, "QUEEN_CORS_ORIGINS", is_origin, "origin",
                      "an origin (scheme://host[:port], scheme http or https)");
}

std::vector<std::string> parse_allowed_hosts(const std::string& value) {
    return parse_list(value, "QUEEN_ALLOWED_HOSTS", is_host_name, "host", "a host name (no port)");
}

}  // namespace queen::config
