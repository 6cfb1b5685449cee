#include "http/cors_policy.hpp"

#include <boost/beast/core/string.hpp>

#include <algorithm>

namespace queen::http {

cors_policy::cors_policy(std::vector<std::string> origins) : origins_(std::move(origins)) {
    any_ = std::find(origins_.begin(), origins_.end(), "*") != origins_.end();
}

bool cors_policy::listed(std::string_view origin) const {
    return std::any_of(origins_.begin(), origins_.end(),
                       [&](const std::string& o) { return boost::beast::iequals(o, origin); });
}

bool cors_policy::admits(std::string_view origin, std::string_view host) const {
    if (origin.empty() || any_ || listed(origin)) return true;
    // The broker's own origin: what follows "scheme://" is the Host the browser addressed.
    const auto sep = origin.find("://");
    return sep != std::string_view::npos && !host.empty() && boost::beast::iequals(origin.substr(sep + 3), host);
}

std::string cors_policy::allow_origin(std::string_view origin) const {
    if (any_) return "*";
    if (!origin.empty() && listed(origin)) return std::string(origin);
    return {};
}

}  // namespace queen::http
