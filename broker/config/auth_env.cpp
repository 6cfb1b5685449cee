#include "config/auth_env.hpp"

#include "auth/jwt_algorithm.hpp"
#include "config/env_reader.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace queen::config {

namespace {

// The variable's value when it is set and not empty.
const std::string* get(const std::map<std::string, std::string>& env, const char* key) {
    auto it = env.find(key);
    if (it == env.end() || it->second.empty()) return nullptr;
    return &it->second;
}

// "a, b ,c" -> {"a", "b", "c"}; empty entries dropped.
std::vector<std::string> comma_list(const std::string& value) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= value.size()) {
        auto comma = value.find(',', start);
        if (comma == std::string::npos) comma = value.size();
        std::string item = value.substr(start, comma - start);
        auto first = item.find_first_not_of(" \t");
        auto last = item.find_last_not_of(" \t");
        if (first != std::string::npos) out.push_back(item.substr(first, last - first + 1));
        start = comma + 1;
    }
    return out;
}

void set_text(const std::map<std::string, std::string>& env, const char* key, std::string& field) {
    if (auto v = get(env, key)) field = *v;
}

}  // namespace

auth::auth_config auth_from_map(const std::map<std::string, std::string>& env) {
    auth::auth_config c;
    if (auto v = get(env, "JWT_ENABLED")) c.enabled = parse_bool("JWT_ENABLED", *v);
    if (auto v = get(env, "JWT_ALGORITHM")) {
        if (*v != "auto" && !auth::algorithm_from_name(*v))
            throw std::invalid_argument(
                fmt::format("JWT_ALGORITHM must be auto or one of {}, not '{}'", auth::algorithm_names(), *v));
        c.algorithm = *v;
    }
    set_text(env, "JWT_SECRET", c.secret);
    set_text(env, "JWT_PUBLIC_KEY", c.public_key_pem);
    set_text(env, "JWT_JWKS_FILE", c.jwks_file);
    set_text(env, "JWT_JWKS_URL", c.jwks_url);
    set_text(env, "JWT_ISSUER", c.issuer);
    set_text(env, "JWT_AUDIENCE", c.audience);
    if (auto v = get(env, "JWT_CLOCK_SKEW"))
        c.clock_skew = std::chrono::seconds(parse_number("JWT_CLOCK_SKEW", *v, 0, 86400));
    // Set but empty means "skip nothing"; unset keeps the default.
    if (auto it = env.find("JWT_SKIP_PATHS"); it != env.end()) c.skip_paths = comma_list(it->second);
    if (auto v = get(env, "JWT_JWKS_REFRESH_INTERVAL"))
        c.jwks_refresh_interval = std::chrono::seconds(parse_number("JWT_JWKS_REFRESH_INTERVAL", *v, 1, 86400 * 30));
    if (auto v = get(env, "JWT_JWKS_TIMEOUT_MS"))
        c.jwks_timeout = std::chrono::milliseconds(parse_number("JWT_JWKS_TIMEOUT_MS", *v, 1, 600000));
    set_text(env, "JWT_ROLES_CLAIM", c.roles_claim);
    set_text(env, "JWT_ROLES_ARRAY_CLAIM", c.roles_array_claim);
    set_text(env, "JWT_ROLE_ADMIN", c.role_admin);
    set_text(env, "JWT_ROLE_READ_WRITE", c.role_read_write);
    set_text(env, "JWT_ROLE_READ_ONLY", c.role_read_only);
    if (!c.jwks_file.empty() && !c.jwks_url.empty())
        throw std::invalid_argument("set JWT_JWKS_FILE or JWT_JWKS_URL, not both");
    if (!c.jwks_url.empty() && c.jwks_url.rfind("http://", 0) != 0 && c.jwks_url.rfind("https://", 0) != 0)
        throw std::invalid_argument("JWT_JWKS_URL must be an http:// or https:// URL");
    return c;
}

std::string describe(const auth::auth_config& c) {
    if (!c.enabled) return "auth: off (JWT_ENABLED is not true): every route is open";
    return fmt::format(
        "auth: JWT_ENABLED=true JWT_ALGORITHM={} JWT_SECRET={} JWT_PUBLIC_KEY={} JWT_JWKS_FILE={} JWT_JWKS_URL={} "
        "JWT_ISSUER={} JWT_AUDIENCE={} JWT_CLOCK_SKEW={} JWT_SKIP_PATHS={} JWT_JWKS_REFRESH_INTERVAL={} "
        "JWT_JWKS_TIMEOUT_MS={} roles: {}/{} = {}, {}, {}",
        c.algorithm, c.secret.empty() ? "unset" : "set", c.public_key_pem.empty() ? "unset" : "set",
        c.jwks_file.empty() ? "unset" : c.jwks_file, c.jwks_url.empty() ? "unset" : c.jwks_url,
        c.issuer.empty() ? "unchecked" : c.issuer, c.audience.empty() ? "unchecked" : c.audience, c.clock_skew.count(),
        fmt::join(c.skip_paths, ","), c.jwks_refresh_interval.count(), c.jwks_timeout.count(), c.roles_claim,
        c.roles_array_claim, c.role_admin, c.role_read_write, c.role_read_only);
}

}  // namespace queen::config
