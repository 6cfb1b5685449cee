#include "http/cors_policy.hpp"

#include "util/utf8.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/beast/core/string.hpp>

#include <algorithm>

namespace queen::http {
namespace {

// Longest piece of a client's text echoed in a refusal.
constexpr std::size_t max_echo_bytes = 200;

// The host of a Host header value: without its port, an IPv6 literal without its brackets.
std::string_view host_name_of(std::string_view host) {
    if (!host.empty() && host.front() == '[') {
        const auto close = host.find(']');
        return close == std::string_view::npos ? std::string_view() : host.substr(1, close - 1);
    }
    return host.substr(0, host.find(':'));
}

}  // namespace

cors_policy::cors_policy(std::vector<std::string> origins, std::string listener_scheme,
                         std::optional<std::vector<std::string>> host_names)
    : origins_(std::move(origins)), scheme_(std::move(listener_scheme)), host_names_(std::move(host_names)) {
    any_ = std::find(origins_.begin(), origins_.end(), "*") != origins_.end();
}

bool cors_policy::listed(std::string_view origin) const {
    return std::any_of(origins_.begin(), origins_.end(),
                       [&](const std::string& o) { return boost::beast::iequals(o, origin); });
}

bool cors_policy::own_host(std::string_view host) const {
    const std::string_view name = host_name_of(host);
    if (name.empty()) return false;
    boost::system::error_code ec;
    boost::asio::ip::make_address(std::string(name), ec);
    if (!ec || boost::beast::iequals(name, "localhost")) return true;
    return std::any_of(host_names_->begin(), host_names_->end(),
                       [&](const std::string& n) { return n == "*" || boost::beast::iequals(n, name); });
}

bool cors_policy::admits(std::string_view origin, std::string_view host) const {
    if (origin.empty() || any_ || listed(origin)) return true;
    // The broker's own origin: the listener's scheme, then the Host the browser addressed.
    const auto sep = origin.find("://");
    return sep != std::string_view::npos && boost::beast::iequals(origin.substr(0, sep), scheme_) && !host.empty() &&
           boost::beast::iequals(origin.substr(sep + 3), host);
}

std::string cors_policy::refusal(std::string_view origin, std::string_view host, bool from_browser) const {
    if (!admits(origin, host))
        return "the origin " + util::printable_echo(origin, max_echo_bytes) +
               " may not call this broker (QUEEN_CORS_ORIGINS)";
    if (from_browser && host_names_ && !own_host(host))
        return "the host " + util::printable_echo(host, max_echo_bytes) +
               " is not a name of this broker (QUEEN_ALLOWED_HOSTS)";
    return {};
}

std::string cors_policy::allow_origin(std::string_view origin) const {
    if (any_) return "*";
    if (!origin.empty() && listed(origin)) return std::string(origin);
    return {};
}

}  // namespace queen::http
