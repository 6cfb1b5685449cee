#pragma once
// QUEEN_CORS_ORIGINS: the origins whose web pages may call the broker from a browser, and
// QUEEN_ALLOWED_HOSTS: the names a browser may address it by while auth is off
// (docs/security.md, "Browsers and CORS").
#include <string>
#include <vector>

namespace queen::config {

// A comma-separated list of origins (`scheme://host[:port]`, scheme http or https, no path),
// or `*` alone for any origin. Returns them lower-cased, without duplicates; an empty or blank
// value is none. Throws std::invalid_argument naming QUEEN_CORS_ORIGINS and the bad entry.
std::vector<std::string> parse_cors_origins(const std::string& value);

// QUEEN_ALLOWED_HOSTS: a comma-separated list of host names (letters, digits, '-', '.'; no
// port), or `*` alone for any. Returns them lower-cased, without duplicates. Throws
// std::invalid_argument naming QUEEN_ALLOWED_HOSTS and the bad entry.
std::vector<std::string> parse_allowed_hosts(const std::string& value);

}  // namespace queen::config
