#pragma once
// Which browser requests the broker serves (docs/security.md, "Browsers and CORS"). A
// request's Origin header is admitted when it is absent (curl, server-side clients), when it
// names the broker itself (the dashboard: the Origin's scheme is the listener's and its host
// and port equal the Host header), or when QUEEN_CORS_ORIGINS lists it (or is `*`). Any other
// origin is refused with 403 before the route is looked at, so a web page cannot make a
// visitor's browser act on a broker it can reach. While auth is off, a browser request (one
// carrying Origin or Sec-Fetch-Site) must also address the broker by one of its own names (an
// IP literal, localhost, or QUEEN_ALLOWED_HOSTS): a page whose DNS name was rebound to the
// broker's address is refused too.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace queen::http {

class cors_policy {
public:
    cors_policy() = default;
    // origins: lower-cased `scheme://host[:port]` entries, or {"*"} (config/cors_origins.hpp).
    // listener_scheme: "http" or "https". host_names: set while auth is off: the lower-cased
    // names a browser request's Host may carry besides IP literals and localhost ({"*"}: any).
    explicit cors_policy(std::vector<std::string> origins, std::string listener_scheme = "http",
                         std::optional<std::vector<std::string>> host_names = std::nullopt);

    // True when a request with these Origin and Host header values may be served (the origin
    // rule only).
    bool admits(std::string_view origin, std::string_view host) const;

    // The 403 text for a request with these Origin and Host values (from_browser: it carries
    // Origin or Sec-Fetch-Site), or empty when it may be served.
    std::string refusal(std::string_view origin, std::string_view host, bool from_browser) const;

    // The Access-Control-Allow-Origin value for an admitted request's Origin: "*" when any
    // origin is allowed, the origin itself when it is listed, empty otherwise (no header).
    std::string allow_origin(std::string_view origin) const;

private:
    bool listed(std::string_view origin) const;
    bool own_host(std::string_view host) const;

    std::vector<std::string> origins_;
    bool any_ = false;
    std::string scheme_ = "http";
    std::optional<std::vector<std::string>> host_names_;
};

}  // namespace queen::http
