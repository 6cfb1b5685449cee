#pragma once
// Which browser origins may call the broker (docs/security.md, "Browsers and CORS"). A
// request's Origin header is admitted when it is absent (curl, server-side clients), when it
// names the broker itself (the dashboard: the Origin's host and port equal the Host header),
// or when QUEEN_CORS_ORIGINS lists it (or is `*`). Any other origin is refused with 403
// before the route is looked at, so a web page cannot make a visitor's browser act on a
// broker it can reach.
#include <string>
#include <string_view>
#include <vector>

namespace queen::http {

class cors_policy {
public:
    cors_policy() = default;
    // origins: lower-cased `scheme://host[:port]` entries, or {"*"} (config/cors_origins.hpp).
    explicit cors_policy(std::vector<std::string> origins);

    // True when a request with these Origin and Host header values may be served.
    bool admits(std::string_view origin, std::string_view host) const;

    // The Access-Control-Allow-Origin value for an admitted request's Origin: "*" when any
    // origin is allowed, the origin itself when it is listed, empty otherwise (no header).
    std::string allow_origin(std::string_view origin) const;

private:
    bool listed(std::string_view origin) const;

    std::vector<std::string> origins_;
    bool any_ = false;
};

}  // namespace queen::http
