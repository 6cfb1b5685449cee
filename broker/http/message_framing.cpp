#include "http/message_framing.hpp"

#include "util/utf8.hpp"

#include <boost/beast/core/string.hpp>

#include <vector>

namespace queen::http {
namespace {

// Longest piece of a coding echoed in the refusal.
constexpr std::size_t max_echo_bytes = 64;

std::string_view trimmed(std::string_view s) {
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The codings of every Transfer-Encoding field, in order, without parameters or empty entries.
std::vector<std::string_view> codings_of(const bhttp::request_header<>& header) {
    std::vector<std::string_view> out;
    const auto [first, last] = header.equal_range(bhttp::field::transfer_encoding);
    for (auto field = first; field != last; ++field) {
        std::string_view rest = field->value();
        while (!rest.empty()) {
            const auto comma = rest.find(',');
            std::string_view coding = rest.substr(0, comma);
            coding = trimmed(coding.substr(0, coding.find(';')));
            if (!coding.empty()) out.push_back(coding);
            rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        }
    }
    return out;
}

}  // namespace

std::optional<std::string> framing_refusal(const bhttp::request_header<>& header) {
    if (header.find(bhttp::field::transfer_encoding) == header.end()) return std::nullopt;
    if (header.version() < 11) return "Transfer-Encoding is not allowed in an HTTP/1.0 request";
    if (header.find(bhttp::field::content_length) != header.end())
        return "a request may not carry both Transfer-Encoding and Content-Length";
    for (const auto coding : codings_of(header))
        if (!boost::beast::iequals(coding, "chunked"))
            return "Transfer-Encoding " + util::printable_echo(coding, max_echo_bytes) +
                   " is not supported (only chunked)";
    if (codings_of(header).size() != 1) return "Transfer-Encoding must be chunked, once";
    return std::nullopt;
}

}  // namespace queen::http
